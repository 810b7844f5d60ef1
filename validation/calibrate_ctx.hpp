// Internal to gtsim calibrate (calibrate.cpp, calibrate_clock.cpp): the state the fits share (the
// measured data, the model runner, the config being fitted and the parameters fitted so far) and
// small helpers. Not part of the library's interface.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "validation/calibrate.hpp"
#include "validation/fitmath.hpp"
#include "validation/measured.hpp"
#include "validation/simrun.hpp"

namespace gtsim::validation::detail {

struct Ctx {
  const Dataset& data;
  const Dataset& all;  // every batch (later batches: repeats used only as leave-out checks, never fitted)
  SimRunner& sim;
  const ConfigNode& root;
  const CalibrationOptions& opt;
  CalibrationResult& res;
  std::vector<std::string> fixed;  // overrides of the parameters fitted so far

  std::vector<std::string> with(const std::string& key, const std::string& value) const {
    auto s = fixed;
    s.push_back(key + "=" + value);
    return s;
  }
  double previous(const std::string& key) const {
    const ConfigNode* n = &root;
    std::stringstream ks(key);
    std::string part;
    while (std::getline(ks, part, '.')) {
      if (!n->is_map() || !n->has(part)) return std::nan("");
      n = &n->at(part);
    }
    auto v = n->is_scalar() ? parse_number(n->scalar()) : std::nullopt;
    return v ? *v : std::nan("");
  }
  // The override that shrinks the L2 by `k` (rounded to whole sets of every slice): model runs at
  // 1/k of the measured size keep the measured footprint-to-L2 ratio (a similarity scaling that
  // keeps calibration fast; the HBM, latencies and per-slice rates are unchanged).
  std::string l2_scaled(int k) const {
    auto num = [&](const char* key, double d) {
      double v = previous(key);
      return std::isfinite(v) ? v : d;
    };
    double size = num("l2.size_bytes", 50331648);
    for (const auto& f : fixed)
      if (f.rfind("l2.size_bytes=", 0) == 0) size = std::stod(f.substr(14));
    double unit = num("l2.slices", 1) * num("l2.assoc", 16) * num("l2.line_bytes", 128);
    double v = std::max(unit, std::round(size / k / unit) * unit);
    return "l2.size_bytes=" + std::to_string(int64_t(v));
  }
  std::vector<double> times_us(const std::vector<SimJob>& jobs) {
    auto outs = sim.run_all(jobs);
    std::vector<double> t;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].ok) throw SimulationError("calibration run of " + jobs[i].kernel + " failed: " + outs[i].error);
      t.push_back(outs[i].result.time_us);
    }
    return t;
  }
  // What a point timed back to back in a stream adds per launch to the model's time (which is a
  // CUDA-graph launch's): launch.stream_gap_us as fitted, else as committed; 0 for graph-timed points.
  double stream_gap(const MeasuredPoint& q) const {
    if (q.graph_timed) return 0;
    if (const CalibratedParam* p = res.find("launch.stream_gap_us")) return p->value;
    double v = previous("launch.stream_gap_us");
    return std::isfinite(v) ? v : 0;
  }
  void add(CalibratedParam p, const std::vector<FitResidual>& resid) {
    p.previous = previous(p.key);
    if (!p.written.empty()) fixed.push_back(p.key + "=" + p.written);
    for (auto r : resid) {
      r.param = p.key;
      res.residuals.push_back(r);
    }
    res.params.push_back(std::move(p));
  }
};

std::string as_int(double v);                // rounded to a whole number, as text
std::string as_dec(double v, int decimals);  // fixed decimals, as text
double rms(const std::vector<double>& v);    // root mean square of the finite values

// A parameter measured directly: the median of `readings`, its standard error, written as a whole
// number (clocks).
CalibratedParam median_reading(const std::string& key, const std::string& unit, const std::vector<double>& readings);

void fit_clock(Ctx& c);         // clocks.sm_mhz (calibrate_clock.cpp)
void fit_tensor_clock(Ctx& c);  // clocks.sm_mhz_tensor (calibrate_clock.cpp)

}  // namespace gtsim::validation::detail
