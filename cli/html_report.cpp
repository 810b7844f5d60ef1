// --html: one self-contained page per run, workload, compare or sweep (cli/html_report.hpp).
#include "cli/html_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "cli/cli_util.hpp"
#include "sim/error.hpp"
#include "sim/output_file.hpp"

#ifndef GTSIM_VERSION
#define GTSIM_VERSION "unknown"
#endif

namespace gtsim::cli {

namespace fs = std::filesystem;

namespace {

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  return o;
}

std::string num(double v, const char* f = "%.4g") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string cell(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return num(v.get<double>());
  if (v.is_null()) return "-";
  return v.dump();
}

double jnum(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0;
}

bool on_path(const char* exe) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / exe).c_str(), X_OK) == 0) return true;
  return false;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A private folder under the system's temporary one, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "gtsim_html_XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("cannot make a temporary folder for the figures");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A datablock row's label: double-quoted, without quotes or line breaks inside.
std::string label(const std::string& s) {
  std::string q = "\"";
  for (char c : s)
    if (c != '"' && c != '\n' && c != '\r') q += c;
  return q + "\"";
}

// Horizontal bars of (label, value) pairs; `xlabel` names the value.
std::string hbars(const std::vector<std::pair<std::string, double>>& bars, const std::string& title,
                  const std::string& xlabel, const char* colour) {
  std::ostringstream d, g;
  double top = 0;
  for (const auto& [l, v] : bars) d << label(l) << " " << num(v, "%.6g") << "\n", top = std::max(top, v);
  g << "set title '" << title << "' noenhanced\nset xlabel '" << xlabel << "'\nset yrange [-0.6:" << bars.size() - 0.4
    << "]\nset xrange [0:" << num(top > 0 ? top * 1.08 : 1, "%.6g")
    << "]\nset ytics noenhanced\nset grid xtics\nset key off\nset style fill solid 0.75 border -1\n"
    << "set lmargin 34\nplot $d using ($2/2):0:($2/2):(0.35):yticlabels(1) with boxxyerror lc rgb '" << colour
    << "' notitle\n";
  return gnuplot_svg(d.str(), g.str(), 900, std::max<int>(240, 90 + 34 * int(bars.size())));
}

}  // namespace

std::shared_ptr<std::string> add_html_option(CLI::App& app, const std::string& what) {
  auto p = std::make_shared<std::string>();
  app.add_option("--html", *p,
                 "write one self-contained HTML page to PATH.html: " + what +
                     ", and the resolved machine config (figures drawn by gnuplot, inline SVG, no network)");
  return p;
}

void check_html_path(const std::string& path) {
  if (path.empty()) return;
  SourcePos pos{"<--html " + path + ">"};
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (path == "-" || (e != ".html" && e != ".htm"))
    throw InputError(pos, "--html " + path + ": the report is one HTML page; expected a path ending in .html");
  check_output_path(path);
  if (!on_path("gnuplot"))
    throw InputError(pos, "--html " + path +
                              ": the report's figures are drawn by gnuplot, which is not on the PATH; install it "
                              "(Debian: apt-get install gnuplot-nox, or scripts/setup.sh)");
}

std::string inline_svg(const std::string& svg_text, const std::string& prefix) {
  size_t at = svg_text.find("<svg");
  std::string s = at == std::string::npos ? svg_text : svg_text.substr(at);
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  };
  replace_all("id='", "id='" + prefix);
  replace_all("id=\"", "id=\"" + prefix);
  replace_all("href='#", "href='#" + prefix);
  replace_all("href=\"#", "href=\"#" + prefix);
  replace_all("url(#", "url(#" + prefix);
  return s;
}

std::string svg_from(const std::function<void(const std::string& image)>& draw) {
  TempDir dir;
  fs::path image = dir.path / "figure.svg";
  {
    // the writer's "wrote PATH" names a temporary file: not for the user
    std::ostringstream quiet;
    std::streambuf* err = std::cerr.rdbuf(quiet.rdbuf());
    try {
      draw(image.string());
    } catch (...) {
      std::cerr.rdbuf(err);
      throw;
    }
    std::cerr.rdbuf(err);
  }
  if (!fs::exists(image)) throw std::runtime_error("the figure was not drawn");
  return read_file(image);
}

std::string gnuplot_svg(const std::string& data, const std::string& script, int width, int height) {
  TempDir dir;
  fs::path gp = dir.path / "figure.gp", svg = dir.path / "figure.svg", log = dir.path / "gnuplot.log";
  {
    std::ofstream o(gp);
    o << "set terminal svg size " << width << "," << height
      << " fixed noenhanced font 'sans,12' background rgb 'white'\nset output '" << svg.string() << "'\n$d << EOD\n"
      << data << "EOD\n"
      << script;
  }
  // every path here is the temporary folder's own (mkdtemp: no quotes in it)
  int rc = std::system(("gnuplot '" + gp.string() + "' > '" + log.string() + "' 2>&1").c_str());
  if (rc != 0 || !fs::exists(svg)) throw std::runtime_error("gnuplot failed: " + read_file(log));
  return read_file(svg);
}

std::string this_command_line() {
  std::string raw = read_file("/proc/self/cmdline");
  std::vector<std::string> args;
  for (size_t b = 0, e; b < raw.size(); b = e + 1) {
    e = raw.find('\0', b);
    if (e == std::string::npos) e = raw.size();
    args.push_back(raw.substr(b, e - b));
  }
  if (args.empty() || fs::path(args[0]).filename() != "gtsim") return "";
  std::string out = "gtsim";
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](unsigned char c) {
      return std::isalnum(c) || std::string("-_./=,:+^").find(char(c)) != std::string::npos;
    });
    out += " " + (plain ? a : "'" + a + "'");
  }
  return out;
}

HtmlTable table_from_csv(const std::string& caption, const std::string& csv) {
  HtmlTable t{caption, {}, {}};
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) cells.push_back(c);
    if (t.header.empty())
      t.header = cells;
    else
      t.rows.push_back(cells);
  }
  return t;
}

std::string render_html(const HtmlReport& r) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
    << "<meta name=\"generator\" content=\"gtsim " << GTSIM_VERSION << " (" << esc(git_revision()) << ")\">\n"
    << "<title>" << esc(r.title) << "</title>\n<style>\n"
    << "body{font-family:sans-serif;margin:2em auto;max-width:1000px;color:#222}\n"
    << "pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:13px}\n"
    << "table{border-collapse:collapse;font-size:13px;margin:.5em 0 1.5em}\n"
    << "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}th{background:#eee}\n"
    << "td:first-child,th:first-child{text-align:left}caption{text-align:left;font-weight:bold;padding:.3em 0}\n"
    << "figure{margin:1em 0}figure svg{max-width:100%;height:auto}figcaption{font-size:13px;color:#555}\n"
    << "code{background:#f6f6f6}\n</style>\n</head>\n<body>\n<h1>" << esc(r.title) << "</h1>\n";
  if (!r.command.empty()) o << "<p>Written by <code>" << esc(r.command) << "</code></p>\n";
  o << "<section id=\"summary\">\n<h2>Summary</h2>\n<pre>" << esc(r.summary) << "</pre>\n</section>\n";
  if (!r.figures.empty()) {
    o << "<section id=\"figures\">\n<h2>Figures</h2>\n";
    for (size_t i = 0; i < r.figures.size(); ++i)
      o << "<figure id=\"figure-" << i + 1 << "\">\n"
        << r.figures[i].svg << "\n<figcaption>Figure " << i + 1 << ". " << esc(r.figures[i].caption)
        << "</figcaption>\n</figure>\n";
    o << "</section>\n";
  }
  if (!r.tables.empty()) {
    o << "<section id=\"tables\">\n<h2>Tables</h2>\n";
    for (const auto& t : r.tables) {
      o << "<table>\n<caption>" << esc(t.caption) << "</caption>\n<thead><tr>";
      for (const auto& h : t.header) o << "<th>" << esc(h) << "</th>";
      o << "</tr></thead>\n<tbody>\n";
      for (const auto& row : t.rows) {
        o << "<tr>";
        for (const auto& c : row) o << "<td>" << esc(c) << "</td>";
        o << "</tr>\n";
      }
      o << "</tbody>\n</table>\n";
    }
    o << "</section>\n";
  }
  o << "<section id=\"config\">\n<h2>Machine config</h2>\n";
  for (const auto& [name, yaml] : r.configs)
    o << "<details open>\n<summary>" << esc(name) << "</summary>\n<pre class=\"config\">" << esc(yaml)
      << "</pre>\n</details>\n";
  o << "</section>\n<footer><p>gtsim " << GTSIM_VERSION << " (" << esc(git_revision())
    << "); every figure and table comes from this run of the model.</p></footer>\n</body>\n</html>\n";
  return o.str();
}

void write_html(const std::string& path, const HtmlReport& r) {
  if (path.empty()) return;
  write_output(path, render_html(r));
  std::cerr << "gtsim: wrote the HTML report " << path << " (" << r.figures.size() << " figure"
            << (r.figures.size() == 1 ? "" : "s") << ", " << r.tables.size() << " table"
            << (r.tables.size() == 1 ? "" : "s") << ")\n";
}

HtmlReport run_html(const nlohmann::json& j, const std::string& text, const std::string& config_yaml) {
  HtmlReport r;
  r.title = "gtsim run: " + j.value("kernel", std::string("?")) + " on " + j.value("hw", std::string("?"));
  r.command = this_command_line();
  r.summary = text;
  r.configs.push_back({"resolved config: " + j.value("hw_file", std::string("?")), config_yaml});
  const nlohmann::json m = j.value("metrics", nlohmann::json::object());
  // where the issue slots went: stall reasons per issued instruction
  std::vector<std::pair<std::string, double>> stalls;
  const std::string pre = "smsp__average_warps_issue_stalled_", post = "_per_issue_active.ratio";
  for (const auto& [k, v] : m.items())
    if (k.rfind(pre, 0) == 0 && k.size() > pre.size() + post.size() && v.is_number())
      stalls.push_back({k.substr(pre.size(), k.size() - pre.size() - post.size()), v.get<double>()});
  std::sort(stalls.begin(), stalls.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!stalls.empty())
    r.figures.push_back(
        {"Where the warps waited: stall reasons per issued instruction (Nsight Compute's "
         "smsp__average_warps_issue_stalled_*_per_issue_active.ratio, simulated)",
         inline_svg(hbars(stalls, "warp stalls per issued instruction", "warps stalled per issue", "#cc6677"), "f1-")});
  // bytes per level
  auto sectors = [&](const char* k) { return m.contains(k) && m[k].is_number() ? 32.0 * m[k].get<double>() : 0.0; };
  std::vector<std::pair<std::string, double>> bytes = {
      {"L1 global loads", sectors("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") / 1e6},
      {"L1 global stores", sectors("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") / 1e6},
      {"L2 (all sectors)", sectors("lts__t_sectors.sum") / 1e6},
      {"DRAM read", jnum(j, "dram_read_bytes") / 1e6},
      {"DRAM write", jnum(j, "dram_write_bytes") / 1e6}};
  r.figures.push_back({"Bytes moved at each level of the memory hierarchy (MB = 10^6 bytes; sectors of 32 bytes)",
                       inline_svg(hbars(bytes, "bytes per level", "MB", "#4477aa"), "f2-")});
  HtmlTable key{"Key figures", {"figure", "value"}, {}};
  for (const char* k : {"time_us", "cycles", "sm_mhz", "launch_overhead_us", "ctas", "ctas_per_sm", "occupancy_limiter",
                        "waves", "last_wave_fill", "warp_instructions", "flops", "dram_read_bytes", "dram_write_bytes",
                        "l2_dirty_bytes_at_end", "l2_hit_rate"})
    if (j.contains(k)) key.rows.push_back({k, cell(j[k])});
  if (j.contains("params"))
    for (const auto& [k, v] : j["params"].items()) key.rows.push_back({"param " + k, cell(v)});
  r.tables.push_back(key);
  HtmlTable met{"Metrics (Nsight Compute names)", {"metric", "value"}, {}};
  for (const auto& [k, v] : m.items()) met.rows.push_back({k, cell(v)});
  r.tables.push_back(met);
  return r;
}

HtmlReport workload_html(const nlohmann::json& j, const std::string& text, const std::string& config_yaml) {
  HtmlReport r;
  r.title = "gtsim workload: " + j.value("workload", std::string("?")) + " on " + j.value("hw", std::string("?"));
  r.command = this_command_line();
  r.summary = text;
  r.configs.push_back({"resolved config", config_yaml});
  const nlohmann::json ks = j.value("kernels", nlohmann::json::array());
  std::vector<std::pair<std::string, double>> bars;
  HtmlTable t{"Kernels in launch order",
              {"op", "kernel", "kind", "time_us", "share", "DRAM bytes", "FLOPs", "FLOP/byte", "bound", "L2 hit rate"},
              {}};
  for (const auto& k : ks) {
    bars.push_back(
        {k.value("op", std::string("?")) + " (" + k.value("bound", std::string("?")) + ")", jnum(k, "time_us")});
    t.rows.push_back({k.value("op", std::string("?")), k.value("kernel", std::string("?")),
                      k.value("kind", std::string("?")), num(jnum(k, "time_us")), num(100 * jnum(k, "share"), "%.1f%%"),
                      num(jnum(k, "dram_read_bytes") + jnum(k, "dram_write_bytes"), "%.0f"),
                      num(jnum(k, "flops"), "%.4g"), num(jnum(k, "intensity")), k.value("bound", std::string("?")),
                      num(jnum(k, "l2_hit_rate"))});
  }
  std::reverse(bars.begin(), bars.end());  // the first kernel on top
  if (!bars.empty())
    r.figures.push_back({"Time per kernel (us), with what bounds it",
                         inline_svg(hbars(bars, "time per kernel", "time (us)", "#4477aa"), "f1-")});
  r.tables.push_back(t);
  return r;
}

HtmlReport compare_html(const nlohmann::json& j, const std::string& text, const std::string& figure_svg,
                        const std::vector<std::pair<std::string, std::string>>& configs) {
  HtmlReport r;
  std::vector<std::string> machines;
  for (const auto& m : j.value("machines", nlohmann::json::array()))
    machines.push_back(m.value("name", std::string("?")));
  std::string names;
  for (const auto& m : machines) names += (names.empty() ? "" : " vs ") + m;
  r.title = "gtsim compare: " + j.value("workload", std::string("?")) + " on " + names;
  r.command = this_command_line();
  r.summary = text;
  if (!figure_svg.empty())
    r.figures.push_back(
        {"Time per op on each machine, split into device time and dispatch (us)", inline_svg(figure_svg, "f1-")});
  HtmlTable t{
      "Per op: time (us), device time without launch/dispatch (us) and bound on each machine", {"op", "kind"}, {}};
  for (const auto& m : machines)
    t.header.push_back(m + " time_us"), t.header.push_back(m + " device_us"), t.header.push_back(m + " bound");
  t.header.push_back("winner");
  for (const auto& op : j.value("ops", nlohmann::json::array())) {
    std::vector<std::string> row = {op.value("op", std::string("?")), op.value("kind", std::string("?"))};
    for (const auto& m : machines) {
      const auto& x = op["machines"].value(m, nlohmann::json::object());
      row.push_back(num(jnum(x, "time_us")));
      row.push_back(num(jnum(x, "device_us")));
      row.push_back(x.value("bound", std::string("-")));
    }
    row.push_back(op.value("winner", std::string("-")));
    t.rows.push_back(row);
  }
  std::vector<std::string> total = {"total", ""};
  const auto& tot = j.value("total", nlohmann::json::object());
  for (const auto& m : machines) {
    const auto& x = tot.value(m, nlohmann::json::object());
    total.push_back(num(jnum(x, "time_us"))), total.push_back(num(jnum(x, "device_us"))), total.push_back("");
  }
  total.push_back(tot.value("winner", std::string("-")));
  t.rows.push_back(total);
  r.tables.push_back(t);
  HtmlTable mt{"Machines",
               {"machine", "target", "peak TFLOP/s", "HBM GB/s", "HBM GiB", "ridge FLOP/byte", "launch/dispatch (us)",
                "device (us)", "total (us)"},
               {}};
  for (const auto& m : j.value("machines", nlohmann::json::array()))
    mt.rows.push_back({m.value("name", std::string("?")), m.value("target", std::string("?")),
                       num(jnum(m, "peak_tflops")), num(jnum(m, "hbm_gbps")), num(jnum(m, "hbm_capacity_gib")),
                       num(jnum(m, "ridge_flop_per_byte")), num(jnum(m, "dispatch_us")), num(jnum(m, "device_us")),
                       num(jnum(m, "total_us"))});
  r.tables.push_back(mt);
  for (const auto& [file, yaml] : configs) r.configs.push_back({"resolved config: " + file, yaml});
  return r;
}

HtmlReport sweep_html(const std::string& title, const std::string& csv, const std::string& figure_svg,
                      const std::string& config_yaml) {
  HtmlReport r;
  r.title = title;
  r.command = this_command_line();
  HtmlTable t = table_from_csv("One row per point, in sweep order (the CSV)", csv);
  r.summary = std::to_string(t.rows.size()) + " points simulated; the CSV's columns: ";
  for (size_t i = 0; i < t.header.size(); ++i) r.summary += (i ? ", " : "") + t.header[i];
  r.summary += "\n";
  if (!figure_svg.empty())
    r.figures.push_back({"Throughput against the swept parameter", inline_svg(figure_svg, "f1-")});
  r.tables.push_back(std::move(t));
  r.configs.push_back({"resolved config", config_yaml});
  return r;
}

}  // namespace gtsim::cli
