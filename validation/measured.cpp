#include "validation/measured.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/error.hpp"
#include "validation/fitmath.hpp"

namespace gtsim::validation {
namespace fs = std::filesystem;

double MeasuredPoint::num(const std::string& col) const {
  auto it = cols.find(col);
  if (it == cols.end()) return std::nan("");
  auto v = parse_number(it->second);
  return v ? *v : std::nan("");
}

gpu::LaunchHistory MeasuredPoint::launch_history() const {
  if (variant == "hot") return {gpu::L2Start::kHot};
  double slots = num("rotation_slots");
  if (variant == "cold" && std::isfinite(slots) && slots >= 1)
    return slots >= 2 ? gpu::LaunchHistory{gpu::L2Start::kRotating, uint64_t(slots)}
                      : gpu::LaunchHistory{gpu::L2Start::kHot};
  // the application twins time back-to-back launches on the same buffers (docs/measurements.md):
  // their inputs are in the L2 when a launch starts (b11: gemm_tiled VEC 1 is 4-14% faster so)
  // l2_read (b20): each CTA reads its own 64 KB in every launch: the L2 holds it
  static const std::set<std::string> reuse = {"gemm_tiled", "gemm_fp32",   "gemm_persistent",
                                              "attention",  "elementwise", "l2_read"};
  if (reuse.count(kernel)) return {gpu::L2Start::kResident};
  return {};
}

std::string MeasuredPoint::label() const {
  std::string s = kernel + "/" + variant;
  static const std::set<std::string> skip = {"batch",     "kernel", "variant", "grid",
                                             "block",     "check",  "repeats", "launches_per_rep",
                                             "median_us", "min_us", "max_us",  "graph_median_us"};
  static const std::set<std::string> keys = {
      "n",    "stride", "footprint_bytes", "ways",       "ctas",   "dtype", "M", "N",   "K",      "m", "k", "rows",
      "cols", "seq",    "heads",           "batch_size", "config", "BH",    "T", "vec", "threads"};
  for (const auto& [k, v] : cols)
    if (keys.count(k) && !skip.count(k)) s += " " + k + "=" + v;
  return s;
}

std::vector<const MeasuredPoint*> Dataset::select(const std::string& kernel, const std::string& variant) const {
  std::vector<const MeasuredPoint*> out;
  for (const auto& p : points)
    if (p.kernel == kernel && (variant.empty() || p.variant == variant)) out.push_back(&p);
  return out;
}

std::string Dataset::cite(const std::string& batch, const std::string& name) const {
  std::string d = fs::path(dir).lexically_normal().generic_string();
  while (!d.empty() && d.back() == '/') d.pop_back();
  auto at = d.find("validation/data/");
  std::string base = at == std::string::npos ? d : d.substr(at);
  return base + "/" + (batch.empty() ? "" : batch + "/") + name;
}

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::set<std::string> kNotPoints = {"manifest.csv", "first_shot.csv", "canary.csv",    "clocks.csv",
                                          "ncu.csv",      "ncu_apps.csv",   "nvidia_smi.csv"};

void load_batch(Dataset& ds, const fs::path& bdir, const std::string& batch) {
  std::vector<fs::path> csvs;
  for (const auto& e : fs::directory_iterator(bdir))
    if (e.is_regular_file() && e.path().extension() == ".csv") csvs.push_back(e.path());
  std::sort(csvs.begin(), csvs.end());
  for (const auto& f : csvs) {
    std::string name = f.filename().string();
    if (name == "clocks.csv") {
      CsvTable t = read_csv(f.string());
      for (size_t r = 0; r < t.rows.size(); ++r) {
        if (t.get(r, "variant") != "micro") continue;  // the clocks read between loaded points
        if (auto v = t.number(r, "sm_mhz_probe")) ds.clock_probe_mhz.push_back(*v);
        if (auto v = t.number(r, "sm_mhz_nvml")) ds.clock_nvml_mhz.push_back(*v);
      }
      continue;
    }
    if (name == "ncu.csv" || name == "ncu_apps.csv") {
      try {
        // Nsight Compute's log file may start with its own "==PROF==" / "==WARNING==" lines
        std::ifstream in(f);
        std::string line, text;
        while (std::getline(in, line))
          if (line.rfind("==", 0) != 0) text += line + "\n";
        ds.ncu.push_back(parse_csv(text, f.string()));
      } catch (const std::exception& e) {
        ds.problems.push_back(ds.cite(batch, name) + ": not read (" + e.what() + ")");
      }
      continue;
    }
    if (kNotPoints.count(name)) continue;
    CsvTable t;
    try {
      t = read_csv(f.string());
    } catch (const std::exception& e) {
      ds.problems.push_back(ds.cite(batch, name) + ": not read (" + e.what() + ")");
      continue;
    }
    if (!t.has("kernel") || !t.has("median_us")) continue;
    for (size_t r = 0; r < t.rows.size(); ++r) {
      MeasuredPoint p;
      p.file = ds.cite(batch, name);
      p.row = r;
      p.cols = t.row_map(r);
      p.batch = t.get(r, "batch").empty() ? batch : t.get(r, "batch");
      p.kernel = t.get(r, "kernel");
      p.variant = t.get(r, "variant");
      if (t.get(r, "check") != "" && t.get(r, "check") != "ok") continue;  // failed correctness check
      double med = t.number(r, "median_us").value_or(0);
      double graph = t.number(r, "graph_median_us").value_or(0);
      p.graph_timed = graph > 0;
      p.time_us = p.graph_timed ? graph : med;
      double scale = p.graph_timed && med > 0 ? graph / med : 1.0;
      p.min_us = t.number(r, "min_us").value_or(med) * scale;
      p.max_us = t.number(r, "max_us").value_or(med) * scale;
      p.repeats = int(t.number(r, "repeats").value_or(0));
      double b = t.number(r, "sm_mhz_before").value_or(0), a = t.number(r, "sm_mhz_after").value_or(b);
      p.sm_mhz = (a + b) / 2;
      if (p.time_us > 0) ds.points.push_back(std::move(p));
    }
  }
  if (fs::exists(bdir / "device.json") && ds.device.is_null()) {
    try {
      ds.device = nlohmann::json::parse(slurp(bdir / "device.json"));
    } catch (const std::exception& e) {
      ds.problems.push_back(ds.cite(batch, "device.json") + ": bad JSON (" + e.what() + ")");
    }
  }
  if (fs::exists(bdir / "ptxas.txt")) ds.ptxas_text[batch] = slurp(bdir / "ptxas.txt");
  if (fs::exists(bdir / "sass.txt.gz")) ds.sass_path[batch] = (bdir / "sass.txt.gz").string();
}
}  // namespace

double Dataset::host_launch_floor_us() const {
  std::vector<double> host;
  for (auto* q : select("empty", "back_to_back")) {
    double stream = q->num("median_us");
    if (std::isfinite(stream) && stream > 0) host.push_back(stream);
  }
  return host.empty() ? 0 : median(host);
}

Dataset load_dataset(const std::string& dir) {
  Dataset ds;
  ds.dir = dir;
  if (!fs::is_directory(dir)) throw InputError(SourcePos{dir}, "measured data: not a folder");
  std::vector<std::string> subs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) subs.push_back(e.path().filename().string());
  // natural order: "b2" before "b10" (the latest batch is the last)
  auto natural = [](const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
      if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
        size_t i2 = i, j2 = j;
        while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
        while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
        std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
        while (na.size() > 1 && na[0] == '0') na.erase(0, 1);
        while (nb.size() > 1 && nb[0] == '0') nb.erase(0, 1);
        if (na.size() != nb.size()) return na.size() < nb.size();
        if (na != nb) return na < nb;
        i = i2, j = j2;
      } else {
        if (a[i] != b[j]) return a[i] < b[j];
        ++i, ++j;
      }
    }
    return a.size() - i < b.size() - j;
  };
  std::sort(subs.begin(), subs.end(), natural);
  for (const auto& b : subs) {
    bool any = false;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / b)) any = any || e.path().extension() == ".csv";
    if (!any) continue;
    ds.batches.push_back(b);
    load_batch(ds, fs::path(dir) / b, b);
  }
  if (ds.batches.empty()) {  // the CSVs lie in `dir` itself
    ds.batches.push_back("");
    load_batch(ds, fs::path(dir), "");
  }
  if (ds.points.empty())
    throw InputError(SourcePos{dir}, "measured data: no kernel CSV (with kernel and median_us columns)");
  return ds;
}

ir::ParamValues bind_params(const MeasuredPoint& p, const std::vector<std::string>& kernel_params) {
  static const std::map<std::string, int64_t> dtypes = {{"f16", 0}, {"bf16", 1}, {"tf32", 2}, {"e4m3", 3}};
  // named variants of twins whose rows carry no variant_id (the IR kernel's `variant` numbers them)
  static const std::map<std::string, std::map<std::string, int64_t>> variants = {
      {"store_tile", {{"mma", 0}, {"rows", 1}, {"half", 2}}}};
  ir::ParamValues out;
  for (const auto& name : kernel_params) {
    auto it = p.cols.find(name);
    if (it == p.cols.end() || it->second.empty()) continue;
    if (auto v = parse_number(it->second))
      out[name] = int64_t(std::llround(*v));
    else if (name == "dtype" && dtypes.count(it->second))
      out[name] = dtypes.at(it->second);
    else if (auto id = p.cols.find(name + "_id"); id != p.cols.end()) {  // a named variant and its number
      if (auto v = parse_number(id->second)) out[name] = int64_t(std::llround(*v));
    } else if (name == "variant" && variants.count(p.kernel) && variants.at(p.kernel).count(it->second)) {
      out[name] = variants.at(p.kernel).at(it->second);
    }
  }
  return out;
}

}  // namespace gtsim::validation
