#include "cli/plot.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "cli/cli_util.hpp"
#include "models/analytic/roofline.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace fs = std::filesystem;

namespace {

std::string extension(const std::string& path) {
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return e;
}

std::string stem_path(const std::string& image) {
  return (fs::path(image).parent_path() / fs::path(image).stem()).string();
}

// A shell word: single-quoted, with embedded quotes closed, escaped and reopened.
std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool have_gnuplot() { return std::system("command -v gnuplot > /dev/null 2>&1") == 0; }

}  // namespace

std::string plot_data_path(const std::string& image) { return stem_path(image) + ".dat"; }
std::string plot_script_path(const std::string& image) { return stem_path(image) + ".gp"; }
std::string plot_data_ref(const std::string& image) { return fs::path(plot_data_path(image)).filename().string(); }

std::string gp_str(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string data_word(const std::string& s) {
  std::string q = "\"";
  for (char c : s)
    if (c != '"' && c != '\n') q += c;
  return q + "\"";
}

void check_plot_path(const std::string& path) {
  if (path.empty()) return;
  const std::string e = extension(path);
  if (e != ".svg" && e != ".png")
    throw InputError(SourcePos{"--plot " + path},
                     "unknown picture format '" + e + "', expected a path ending in .svg or .png");
  for (const auto& p : {path, plot_data_path(path), plot_script_path(path)}) check_output_path(p);
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (::access(dir.c_str(), W_OK) != 0)
    throw InputError(SourcePos{"--plot " + path}, "cannot write in the folder " + dir.string() + " (not writable)");
  if (!have_gnuplot())
    throw InputError(SourcePos{"--plot " + path},
                     "gnuplot was not found on PATH; --plot needs it (Debian: apt-get install gnuplot-nox)");
}

void render_plot(const std::string& image, const std::string& data, const std::string& body, int width, int height) {
  const bool svg = extension(image) == ".svg";
  const std::string name = fs::path(image).filename().string(), gp = plot_script_path(image);
  std::string script = "# gnuplot " + fs::path(gp).filename().string() + " -> " + name +
                       " (written by gtsim; the numbers are in " + plot_data_ref(image) + ")\n";
  script += svg ? "set terminal svg size " + std::to_string(width) + "," + std::to_string(height) +
                      " fixed enhanced font 'sans,12' background rgb 'white'\n"
                : "set terminal pngcairo size " + std::to_string(width) + "," + std::to_string(height) +
                      " enhanced font 'sans,10'\n";
  script += "set output " + gp_str(name) + "\n" + body;
  write_output(plot_data_path(image), data);
  write_output(gp, script);
  fs::path dir = fs::path(image).parent_path();
  if (dir.empty()) dir = ".";
  const std::string log = (fs::temp_directory_path() / ("gtsim_gnuplot_" + std::to_string(::getpid()))).string();
  const std::string cmd = "cd " + sh_quote(dir.string()) + " && gnuplot " + sh_quote(fs::path(gp).filename().string()) +
                          " > " + sh_quote(log) + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::string err;
  if (FILE* f = std::fopen(log.c_str(), "r")) {
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) err.append(buf, n);
    std::fclose(f);
  }
  std::remove(log.c_str());
  if (rc != 0) throw std::runtime_error("gnuplot failed on " + gp + ":\n" + err);
  std::cerr << "wrote " << image << " (data " << plot_data_path(image) << ", script " << gp << ")\n";
}

namespace {
std::string gp_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
std::string short_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}
double json_num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}
}  // namespace

void write_waves_plot(const std::string& image, const std::vector<nlohmann::json>& points, const nlohmann::json& shape,
                      const std::string& xname, const std::string& title) {
  std::ostringstream d, g;
  const std::string data = gp_str(plot_data_ref(image));
  d << "# gtsim waves --range --plot\n# block 0: " << xname << " waves time_us tflops tiles last_wave_fill\n";
  for (const auto& p : points)
    d << p["x"].get<int64_t>() << " " << p["waves"].get<int64_t>() << " " << gp_num(json_num(p, "time_us")) << " "
      << gp_num(json_num(p, "tflops")) << " " << p["tiles"].get<int64_t>() << " "
      << gp_num(json_num(p, "last_wave_fill")) << "\n";
  // One step per wave count: where it starts, and the count.
  d << "\n\n# block 1: steps: first " << xname << " of each wave count, waves, label\n";
  int64_t last = -1;
  for (const auto& p : points) {
    int64_t w = p["waves"].get<int64_t>();
    if (w == last) continue;
    last = w;
    d << p["x"].get<int64_t>() << " " << w << " " << data_word(std::to_string(w) + (w == 1 ? " wave" : " waves"))
      << "\n";
  }
  d << "\n\n# block 2: the --gemm shape: " << xname << " time_us label\n"
    << shape["x"].get<int64_t>() << " " << gp_num(json_num(shape, "time_us")) << " "
    << data_word(shape.value("shape", std::string("--gemm"))) << "\n";
  d << "\n\n# block 3: its padded alternatives: " << xname << " time_us label\n";
  size_t alternatives = 0;
  if (shape.contains("suggestions"))
    for (const auto& s : shape["suggestions"]) {
      if (!s.contains("time_us")) continue;
      d << s["x"].get<int64_t>() << " " << gp_num(json_num(s, "time_us")) << " "
        << data_word(s["gemm"].get<std::string>() + ": " + s["why"].get<std::string>()) << "\n";
      ++alternatives;
    }
  g << "set title " << gp_str(title) << " noenhanced\nset xlabel " << gp_str(xname) << " noenhanced\n"
    << "set ylabel 'simulated time (us)'\nset y2label 'waves' textcolor rgb '#d62728'\n"
    << "set ytics nomirror\nset y2tics " << std::max<int64_t>(1, (last + 9) / 10)
    << " textcolor rgb '#d62728'\nset yrange [0:*]\n"
    << "set y2range [0:*]\nset offsets graph 0.03, graph 0.03, graph 0.12, 0\n"
    << "set grid\nset key outside below noenhanced\n"
    << "plot " << data
    << " index 0 using 1:3 with linespoints pt 7 ps 0.6 lc rgb '#1f77b4' title 'simulated time', \\\n"
    << "  " << data
    << " index 0 using 1:2 axes x1y2 with steps lw 2 lc rgb '#d62728' title 'waves (tiles / wave size)', \\\n"
    << "  " << data
    << " index 1 using 1:2:3 axes x1y2 with labels offset 0,0.8 left textcolor rgb '#d62728' "
       "notitle, \\\n"
    << "  " << data << " index 2 using 1:2 with points pt 6 ps 2.2 lw 2 lc rgb 'black' title "
    << gp_str("--gemm " + shape.value("shape", std::string()));
  if (alternatives > 0)
    g << ", \\\n  " << data << " index 3 using 1:2 with points pt 9 ps 1.8 lc rgb '#2ca02c' title "
      << "'padded alternatives (gtsim waves suggestions)', \\\n  " << data
      << " index 3 using 1:2:3 with labels offset 0,-1.2 center font ',9' textcolor rgb '#2ca02c' notitle";
  g << "\n";
  render_plot(image, d.str(), g.str(), 1000, 620);
}

void write_compare_plot(const std::string& image, const nlohmann::json& compare, const std::vector<double>& launch_us,
                        const std::string& title) {
  const auto& machines = compare["machines"];
  const auto& ops = compare["ops"];
  const size_t nm = machines.size();
  static const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  std::ostringstream d, g;
  const std::string data = gp_str(plot_data_ref(image));
  d << "# gtsim compare --plot: one block per machine; rows: x device_us launch_us op\n";
  std::string xtics;
  bool dispatch = false;
  for (const auto& m : machines) dispatch = dispatch || json_num(m, "per_call_overhead_us") > 0;
  const size_t groups = ops.size() + (dispatch ? 1 : 0);
  for (size_t i = 0; i < groups; ++i) {
    std::string label = i < ops.size() ? ops[i]["op"].get<std::string>() : "dispatch (once per workload)";
    xtics += (i ? ", " : "") + gp_str(label) + " " + gp_num(double(i * (nm + 1)) + double(nm - 1) / 2);
  }
  for (size_t j = 0; j < nm; ++j) {
    const std::string name = machines[j]["name"].get<std::string>();
    d << (j ? "\n\n" : "") << "# block " << j << ": " << name << "\n";
    for (size_t i = 0; i < groups; ++i) {
      double device = 0, launch = 0;
      std::string op;
      if (i < ops.size()) {
        op = ops[i]["op"].get<std::string>();
        const auto& x = ops[i]["machines"][name];
        double t = json_num(x, "time_us");
        if (x.contains("device_us") && x.contains("dispatch_us"))  // compare's own split
          device = json_num(x, "device_us"), launch = json_num(x, "dispatch_us");
        else
          launch = std::min(t, j < launch_us.size() ? launch_us[j] : 0.0), device = t - launch;
      } else {
        op = "dispatch";
        launch = json_num(machines[j], "per_call_overhead_us");
      }
      d << i * (nm + 1) + j << " " << gp_num(device) << " " << gp_num(launch) << " " << data_word(op) << "\n";
    }
  }
  g << "set title " << gp_str(title) << " noenhanced\nset ylabel 'time (us)'\nset yrange [0:*]\n"
    << "set xrange [-1:" << groups * (nm + 1) - 1 << "]\nset xtics (" << xtics << ") rotate by -30 noenhanced\n"
    << "set grid ytics\nset key outside below noenhanced\nset style fill solid 0.85 border rgb 'black'\nplot ";
  for (size_t j = 0; j < nm; ++j) {
    const std::string name = machines[j]["name"].get<std::string>();
    const char* color = kColors[j % (sizeof kColors / sizeof *kColors)];
    g << (j ? ", \\\n  " : "") << data << " index " << j
      << " using 1:($2/2):($1-0.45):($1+0.45):(0):2 with boxxyerror fs solid 0.85 lc rgb '" << color << "' title "
      << gp_str(name + ": device") << ", \\\n  " << data << " index " << j
      << " using 1:($2+$3/2):($1-0.45):($1+0.45):2:($2+$3) with boxxyerror fs pattern 4 lc rgb '" << color << "' title "
      << gp_str(name + (json_num(machines[j], "per_call_overhead_us") > 0 ? ": dispatch" : ": launch"));
  }
  g << "\n";
  render_plot(image, d.str(), g.str(), 1000, 600);
}

void write_roofline_plot(const std::string& image, const analytic::RooflineReport& r, const std::string& title) {
  double lo = 0.1, hi = 1000;
  for (const auto& d : r.ridges) hi = std::max(hi, 10 * std::max(d.ridge_attained, d.ridge_config));
  for (const auto& k : r.kernels)
    if (k.intensity > 0) lo = std::min(lo, k.intensity / 2), hi = std::max(hi, k.intensity * 2);
  std::ostringstream d, g;
  const std::string data = gp_str(plot_data_ref(image));
  static const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
  d << "# gtsim roofline --plot: FLOP per DRAM byte, TFLOP/s\n# attained DRAM bandwidth "
    << gp_num(r.bandwidth_attained) << " B/s (datasheet " << gp_num(r.bandwidth_config) << " B/s)\n";
  g << "set title " << gp_str(title) << " noenhanced\nset logscale xy\nset grid xtics ytics mxtics mytics\n"
    << "set xlabel 'arithmetic intensity (FLOP per DRAM byte)'\nset ylabel 'TFLOP/s'\n"
    << "set xrange [" << gp_num(lo) << ":" << gp_num(hi) << "]\nset key outside right top noenhanced\nplot ";
  int block = 0;
  for (size_t i = 0; i < r.ridges.size(); ++i) {
    const auto& x = r.ridges[i];
    const char* color = kColors[i % (sizeof kColors / sizeof *kColors)];
    for (int attained = 1; attained >= 0; --attained) {
      double bw = attained ? r.bandwidth_attained : r.bandwidth_config;
      double peak = attained ? x.peak_flops_attained : x.peak_flops_config;
      if (bw <= 0 || peak <= 0) continue;
      double ridge = peak / bw;
      d << (block ? "\n\n" : "") << "# block " << block << ": " << x.dtype << (attained ? " attained" : " datasheet")
        << " roof, ridge " << gp_num(ridge) << " FLOP/B\n";
      d << gp_num(lo) << " " << gp_num(bw * lo / 1e12) << "\n"
        << gp_num(std::clamp(ridge, lo, hi)) << " " << gp_num(std::min(peak, bw * std::clamp(ridge, lo, hi)) / 1e12)
        << "\n"
        << gp_num(hi) << " " << gp_num(std::min(peak, bw * hi) / 1e12) << "\n";
      g << (block ? ", \\\n  " : "") << data << " index " << block << " using 1:2 with lines lw "
        << (attained ? "2" : "1 dt 2") << " lc rgb '" << color << "' title "
        << gp_str(x.dtype + (attained ? " (simulated, ridge " : " (datasheet, ridge ") + short_num(ridge) + " FLOP/B)");
      ++block;
    }
  }
  d << "\n\n# block " << block << ": kernels: intensity TFLOP/s op bound (kernels with no FLOPs left out)\n";
  for (const auto& k : r.kernels)
    if (k.intensity > 0 && k.attained_flops > 0)
      d << gp_num(k.intensity) << " " << gp_num(k.attained_flops / 1e12) << " " << data_word(k.op) << " " << k.bound
        << "\n";
  if (!r.kernels.empty())
    g << ", \\\n  " << data << " index " << block << " using 1:2 with points pt 7 ps 1.2 lc rgb 'black' title "
      << "'kernels (simulated)', \\\n  " << data << " index " << block
      << " using 1:2:3 with labels offset 0.8,0.6 left font ',10' noenhanced notitle";
  g << "\n";
  render_plot(image, d.str(), g.str(), 960, 600);
}

}  // namespace gtsim::cli
