#include "cli/sweep.hpp"

#include <atomic>
#include <charconv>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/plot.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace {
InputError bad(const std::string& arg, const std::string& what) { return InputError(SourcePos{arg}, what); }

int64_t parse_int(const std::string& arg, const std::string& text, const char* what) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size())
    throw bad(arg, std::string(what) + " \"" + text + "\" is not an integer, expected NAME=START:STOP[:STEP]");
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t e; (e = s.find(sep, b)) != std::string::npos; b = e + 1) out.push_back(s.substr(b, e - b));
  out.push_back(s.substr(b));
  return out;
}
}  // namespace

const char* const kSweepColumns =
    "kernel,cycles,time_us,waves,last_wave_fill,tflops,dram_read_bytes,dram_write_bytes,l2_hit_rate,estimated_error_"
    "pct,"
    "fraction_simulated";

SweepAxis parse_sweep_axis(const std::string& arg, const std::string& option) {
  std::string where = option + " " + arg;
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) throw bad(where, "expected NAME=START:STOP[:STEP] or NAME=VALUE");
  SweepAxis a;
  a.arg = where;
  a.names = split(arg.substr(0, eq), ',');
  for (const auto& n : a.names)
    if (n.empty()) throw bad(where, "empty parameter name, expected NAME or NAME,NAME,...");
  auto parts = split(arg.substr(eq + 1), ':');
  if (parts.size() > 3) throw bad(where, "expected START:STOP[:STEP]");
  int64_t start = parse_int(where, parts[0], "START");
  int64_t stop = parts.size() > 1 ? parse_int(where, parts[1], "STOP") : start;
  int64_t step = parts.size() > 2 ? parse_int(where, parts[2], "STEP") : 1;
  if (step <= 0) throw bad(where, "STEP is " + std::to_string(step) + ", expected a positive step");
  if (stop < start)
    throw bad(where,
              "STOP " + std::to_string(stop) + " is below START " + std::to_string(start) + ", expected START <= STOP");
  constexpr uint64_t kMaxPoints = 10'000'000;
  if (uint64_t(stop - start) / uint64_t(step) >= kMaxPoints)
    throw bad(where, "more than 10,000,000 values, expected a smaller range or a larger STEP");
  for (int64_t v = start; v <= stop; v += step) {
    a.values.push_back(v);
    if (v > stop - step) break;  // no overflow past INT64_MAX
  }
  return a;
}

std::vector<std::string> sweep_param_names(const std::vector<SweepAxis>& axes) {
  std::vector<std::string> names;
  for (const auto& a : axes)
    for (const auto& n : a.names) {
      for (const auto& m : names)
        if (m == n) throw bad(a.arg, "parameter " + n + " is swept twice, expected each name in one --param");
      names.push_back(n);
    }
  return names;
}

std::vector<ir::ParamValues> sweep_points(const std::vector<SweepAxis>& axes) {
  std::vector<ir::ParamValues> points{ir::ParamValues{}};
  for (const auto& a : axes) {
    if (points.size() * a.values.size() > 10'000'000)
      throw bad(a.arg, "the sweep has more than 10,000,000 points, expected fewer");
    std::vector<ir::ParamValues> next;
    next.reserve(points.size() * a.values.size());
    for (const auto& p : points)
      for (int64_t v : a.values) {
        ir::ParamValues q = p;
        for (const auto& n : a.names) q[n] = v;
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

Shard parse_shard(const std::string& arg) {
  std::string where = "--shard " + arg;
  auto slash = arg.find('/');
  if (slash == std::string::npos) throw bad(where, "expected I/N, e.g. 0/4");
  Shard s;
  int64_t i = parse_int(where, arg.substr(0, slash), "I"), n = parse_int(where, arg.substr(slash + 1), "N");
  if (n < 1 || i < 0 || i >= n)
    throw bad(where, "shard " + std::to_string(i) + " of " + std::to_string(n) + ", expected 0 <= I < N");
  s.index = uint64_t(i), s.count = uint64_t(n);
  return s;
}

// Round-robin: the expensive points (usually the last) spread over the shards.
bool in_shard(uint64_t point, const Shard& s) { return point % s.count == s.index; }

std::vector<SweepRow> run_points(const std::vector<ir::ParamValues>& points, const Shard& shard, unsigned threads,
                                 const std::function<std::string(const ir::ParamValues&)>& simulate,
                                 const std::function<void(uint64_t, uint64_t)>& progress) {
  std::vector<uint64_t> mine;
  for (uint64_t p = 0; p < points.size(); ++p)
    if (in_shard(p, shard)) mine.push_back(p);
  std::vector<SweepRow> rows(mine.size());
  // Hand out the most expensive-looking points first (the largest parameter products), so the
  // threads finish together; the rows keep their sweep order.
  std::vector<size_t> order(mine.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::mutex error_mu;
  std::exception_ptr error;
  auto worker = [&](bool reporter) {
    for (size_t k; (k = next.fetch_add(1)) < order.size();) {
      size_t i = order[k];
      try {
        rows[i] = SweepRow{mine[i], simulate(points[mine[i]])};
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next = order.size();
      }
      done.fetch_add(1);
      if (reporter && progress) progress(done.load(), mine.size());
    }
  };
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(std::max<size_t>(1, mine.size()))));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, false);
  worker(true);
  for (auto& t : pool) t.join();
  if (progress) progress(done.load(), mine.size());
  if (error) std::rethrow_exception(error);
  return rows;
}

std::string sweep_header(const std::vector<std::string>& names) {
  std::string h;
  for (const auto& n : names) h += n + ",";
  return h + kSweepColumns + "\n";
}

std::string shard_comment(const Shard& s, uint64_t points) {
  return "# gtsim sweep shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + " of " +
         std::to_string(points) + " points\n";
}

std::string merge_shards(const std::vector<std::string>& paths) {
  struct Part {
    Shard shard;
    uint64_t points = 0;
    std::vector<std::string> rows;
  };
  std::vector<Part> parts;
  std::string header;
  uint64_t count = 0, total = 0;
  for (const auto& path : paths) {
    std::ifstream in(path);
    if (!in) throw InputError(SourcePos{path}, "cannot read the shard file");
    std::string comment, head, line;
    std::getline(in, comment);
    unsigned long long i = 0, n = 0, p = 0;
    if (std::sscanf(comment.c_str(), "# gtsim sweep shard %llu/%llu of %llu points", &i, &n, &p) != 3 || n == 0 ||
        i >= n)
      throw InputError(SourcePos{path, 1, 1},
                       "expected a shard file written by gtsim sweep --shard I/N "
                       "(its first line: # gtsim sweep shard I/N of P points)");
    std::getline(in, head);
    head += "\n";
    Part part{Shard{i, n}, p, {}};
    if (parts.empty()) header = head, count = n, total = p;
    if (head != header) throw InputError(SourcePos{path, 2, 1}, "its header differs from " + paths[0] + "'s");
    if (n != count || p != total)
      throw InputError(SourcePos{path, 1, 1}, "shard of a " + std::to_string(n) + "-way sweep of " + std::to_string(p) +
                                                  " points, expected " + std::to_string(count) + "-way of " +
                                                  std::to_string(total));
    for (const auto& q : parts)
      if (q.shard.index == i) throw InputError(SourcePos{path, 1, 1}, "shard " + std::to_string(i) + " given twice");
    while (std::getline(in, line))
      if (!line.empty()) part.rows.push_back(line + "\n");
    uint64_t expect = p / n + (i < p % n ? 1 : 0);
    if (part.rows.size() != expect)
      throw InputError(SourcePos{path}, "holds " + std::to_string(part.rows.size()) + " rows, expected " +
                                            std::to_string(expect) + " (an interrupted shard?)");
    parts.push_back(std::move(part));
  }
  if (parts.empty()) throw InputError(SourcePos{"gtsim merge"}, "no shard files given");
  if (parts.size() != count)
    throw InputError(SourcePos{paths[0]}, std::to_string(parts.size()) + " of " + std::to_string(count) +
                                              " shards given, expected all of them");
  std::vector<const Part*> by_index(count);
  for (const auto& q : parts) by_index[q.shard.index] = &q;
  std::string out = header;
  for (uint64_t pt = 0; pt < total; ++pt) out += by_index[pt % count]->rows[pt / count];
  return out;
}

size_t sweep_plot_axis(const std::vector<SweepAxis>& axes) {
  size_t axis = 0, varying = 0;
  std::string list;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].values.size() > 1) {
      if (varying++ == 0) axis = i;
      list += (list.empty() ? "" : " and ") + axes[i].arg;
    }
  if (varying > 1)
    throw InputError(SourcePos{"--plot"}, "a plot has one x axis, but " + list +
                                              " both vary; expected one --param range (the others single values)");
  return axis;
}

int64_t largest_pow2_divisor(int64_t n) {
  if (n <= 0) return 0;
  return n & -n;
}

void write_sweep_plot(const std::string& image, const std::vector<SweepAxis>& axes,
                      const std::vector<std::string>& names, const std::vector<SweepRow>& rows, const std::string& y,
                      const std::string& title) {
  const SweepAxis& axis = axes[sweep_plot_axis(axes)];
  size_t xcol = 0;
  while (xcol < names.size() && names[xcol] != axis.names.front()) ++xcol;
  // the figure's column after the parameters', by its name in kSweepColumns
  size_t ycol = names.size();
  {
    const std::string cols = kSweepColumns, want = y == "time_us" ? "time_us" : "tflops";
    for (const auto& c : split(cols, ',')) {
      if (c == want) break;
      ++ycol;
    }
  }
  std::string xname;
  for (const auto& n : axis.names) xname += (xname.empty() ? "" : ",") + n;
  struct Point {
    std::string x, y;
    int k;  // log2 of the largest power of two dividing x (capped: kMaxK groups the larger ones)
  };
  constexpr int kMaxK = 12;
  std::vector<Point> pts;
  for (const auto& r : rows) {
    std::string line = r.line;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    auto cells = split(line, ',');
    if (cells.size() <= ycol) continue;
    int64_t x = std::stoll(cells[xcol]), p2 = largest_pow2_divisor(x);
    int k = 0;
    while (p2 > 1 && k < kMaxK) p2 >>= 1, ++k;
    pts.push_back({cells[xcol], cells[ycol], k});
  }
  std::ostringstream d;
  d << "# gtsim sweep --plot: " << xname << ", " << y << ", log2 of the largest power of two dividing " << xname
    << "\n# block 0: every point in sweep order\n";
  for (const auto& p : pts) d << p.x << " " << p.y << " " << p.k << "\n";
  static const char* const kColors[] = {"#d62728", "#ff7f0e", "#bcbd22", "#2ca02c", "#17becf", "#1f77b4", "#9467bd",
                                        "#e377c2", "#8c564b", "#7f7f7f", "#000000", "#393b79", "#637939"};
  std::ostringstream g;
  const std::string data = gp_str(plot_data_ref(image));
  g << "set title " << gp_str(title) << " noenhanced\n"
    << "set xlabel " << gp_str(xname) << " noenhanced\n"
    << "set ylabel " << gp_str(y == "time_us" ? "simulated time (us)" : "simulated throughput (TFLOP/s)") << "\n"
    << "set grid\nset key outside right top title " << gp_str("largest 2^k dividing " + xname)
    << " noenhanced\nset yrange [0:*]\n"
    << "plot " << data << " index 0 using 1:2 with lines lc rgb '#c0c0c0' notitle";
  int block = 1;
  for (int k = 0; k <= kMaxK; ++k) {
    bool any = false;
    for (const auto& p : pts) any = any || p.k == k;
    if (!any) continue;
    d << "\n\n# block " << block << ": largest power of two dividing " << xname << " = 2^" << k
      << (k == kMaxK ? " or more" : "") << "\n";
    for (const auto& p : pts)
      if (p.k == k) d << p.x << " " << p.y << " " << p.k << "\n";
    std::string label = std::to_string(int64_t(1) << k) + (k == 0 ? " (odd)" : k == kMaxK ? " or more" : "");
    g << ", \\\n  " << data << " index " << block++ << " using 1:2 with points pt 7 ps 0.9 lc rgb '" << kColors[k]
      << "' title " << gp_str(label);
  }
  g << "\n";
  render_plot(image, d.str(), g.str(), 960, 560);
}

}  // namespace gtsim::cli
