// The SM clock fits of gtsim calibrate: read, not fitted through the model. clocks.sm_mhz from the
// clock probes between loaded points; clocks.sm_mhz_tensor from Nsight Compute's record of the
// tensor-core microbenchmark.
#include <algorithm>
#include <filesystem>
#include <map>

#include "validation/calibrate_ctx.hpp"

namespace gtsim::validation::detail {

namespace fs = std::filesystem;

CalibratedParam median_reading(const std::string& key, const std::string& unit, const std::vector<double>& readings) {
  CalibratedParam p;
  p.key = key;
  p.unit = unit;
  p.value = median(readings);
  p.se = std::max(stddev(readings) / std::sqrt(double(readings.size())), 0.0);
  p.quantum = 1;
  p.written = as_int(p.value);
  return p;
}

// ---- clocks.sm_mhz: the SM clock read under load (clock64 against %globaltimer, and NVML) ----
void fit_clock(Ctx& c) {
  std::vector<double> v = c.data.clock_probe_mhz;
  std::string what = "clock64 / %globaltimer probe between loaded points";
  if (v.empty()) {
    for (const auto& p : c.data.points)
      if (p.sm_mhz > 0) v.push_back(p.sm_mhz);
    what = "NVML SM clock read around every point";
  }
  if (v.empty()) {
    c.res.notes.push_back("clocks.sm_mhz: no clock records; not calibrated");
    return;
  }
  CalibratedParam p = median_reading("clocks.sm_mhz", "MHz", v);
  p.source = c.data.cite(c.data.batches.front(), "clocks.csv");
  p.kind = "measured under load";
  p.method = "median of " + std::to_string(v.size()) + " readings (" + what + ").";
  std::vector<double> loo;
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<double> rest;
    for (size_t j = 0; j < v.size(); ++j)
      if (j != i) rest.push_back(v[j]);
    loo.push_back(median(rest) / v[i] - 1);
  }
  p.loo_err = rms(loo);
  std::vector<double> nvml = c.data.clock_nvml_mhz, implied;
  for (const auto& q : c.data.points)
    if (q.kernel == "pointer_chase" && q.variant == "clock64" && std::isfinite(q.num("implied_sm_mhz")) &&
        q.num("footprint_bytes") >= 16384 && q.num("footprint_bytes") <= 65536)
      implied.push_back(q.num("implied_sm_mhz"));
  p.loo_note = "each reading predicted from the others; cross-checks: NVML median " + fmt(median(nvml), 5) +
               " MHz, chase clock64/time (L1 plateau) " + fmt(median(implied), 5) + " MHz.";
  c.add(p, {});
}

// ---- clocks.sm_mhz_tensor: the SM clock while tensor cores work ----
// Nsight Compute's sm__cycles_elapsed.max over gpu__time_duration.sum of the mma_throughput launches
// (ncu.csv, run with unmodified clocks): Hopper holds a lower SM clock under tensor-core load than
// the NVML reading taken around it.
static std::vector<double> mma_clocks_mhz(const Dataset& d, const std::string& batch) {
  std::vector<double> out;
  for (const auto& t : d.ncu) {
    if (!batch.empty() && fs::path(t.path).parent_path().filename().string() != batch) continue;
    std::map<std::string, std::map<std::string, double>> launch;  // ID -> metric -> value
    for (size_t r = 0; r < t.rows.size(); ++r) {
      if (t.get(r, "Kernel Name").find("mma_throughput") == std::string::npos) continue;
      std::string v = t.get(r, "Metric Value");
      v.erase(std::remove(v.begin(), v.end(), ','), v.end());
      if (auto x = parse_number(v)) launch[t.get(r, "ID")][t.get(r, "Metric Name")] = *x;
    }
    for (auto& [id, m] : launch)
      if (m.count("sm__cycles_elapsed.max") && m["gpu__time_duration.sum"] > 0)
        out.push_back(m["sm__cycles_elapsed.max"] / m["gpu__time_duration.sum"] * 1000.0);
  }
  return out;
}

void fit_tensor_clock(Ctx& c) {
  const std::string& batch = c.data.batches.front();
  std::vector<double> v = mma_clocks_mhz(c.all, batch);
  if (v.empty()) {
    c.res.notes.push_back("clocks.sm_mhz_tensor: no Nsight Compute record of mma_throughput; not calibrated");
    return;
  }
  CalibratedParam p = median_reading("clocks.sm_mhz_tensor", "MHz", v);
  p.source = c.data.cite(batch, "ncu.csv");
  p.kind = "measured under tensor-core load";
  p.method = "median of " + std::to_string(v.size()) +
             " mma_throughput launches: Nsight Compute sm__cycles_elapsed.max / gpu__time_duration.sum.";
  std::vector<double> later;
  for (const auto& b : c.all.batches)
    if (b != batch)
      for (double x : mma_clocks_mhz(c.all, b)) later.push_back(x);
  if (!later.empty()) {
    p.loo_err = std::fabs(p.value / median(later) - 1);
    p.loo_note = "the same launches profiled in later batches: median " + fmt(median(later), 5) + " MHz (" +
                 std::to_string(later.size()) + " launches, never fitted).";
  }
  c.add(p, {});
}

}  // namespace gtsim::validation::detail
