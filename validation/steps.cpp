// Throughput steps (issue 38): between neighbouring points of a sweep, a measured step is a fall in
// throughput beyond noise; a predicted step a simulated fall. A model whose time merely grows with the
// work keeps its throughput flat and predicts no step, so it scores no hit.
#include <algorithm>
#include <cmath>
#include <map>

#include "validation/validate.hpp"

namespace gtsim::validation {

const char* const kStepDefinition =
    "a measured step is a fall in throughput (the runner's work / time; 1 / time where it records none) over 5% "
    "and over 3x the spread between repeats, between neighbouring points of a held-out sweep; a predicted step a "
    "simulated fall over 5%; wave steps (the number of waves changes) are counted apart from the others";

StepStats count_steps(const std::vector<PointResult>& points) {
  StepStats s;
  std::map<std::string, std::vector<const PointResult*>> sweeps;
  for (const auto& p : points)
    if (p.role == "held-out" && std::isfinite(p.sim) && p.sim > 0 && p.meas > 0 && p.quantity == "time")
      sweeps[p.sweep].push_back(&p);
  for (auto& [k, v] : sweeps) {
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->x < b->x; });
    for (size_t i = 0; i + 1 < v.size(); ++i) {
      const PointResult &a = *v[i], &b = *v[i + 1];
      double meas_fall = 1 - b.rate(b.meas) / a.rate(a.meas), sim_fall = 1 - b.rate(b.sim) / a.rate(a.sim);
      // noise: the relative spread of either point's repeats, three times over
      double noise = 3 * std::max(a.meas_spread / a.meas, b.meas_spread / b.meas);
      bool meas_step = meas_fall > 0.05 && meas_fall > noise;
      bool sim_step = sim_fall > 0.05;
      if (!meas_step && !sim_step) continue;
      double wa = std::isfinite(a.sim_waves) ? a.sim_waves : a.meas_waves,
             wb = std::isfinite(b.sim_waves) ? b.sim_waves : b.meas_waves;
      bool wave = std::isfinite(wa) && std::isfinite(wb) && std::ceil(wa - 1e-9) != std::ceil(wb - 1e-9);
      s.measured += meas_step, s.predicted += sim_step, s.hits += meas_step && sim_step;
      (wave ? s.wave_measured : s.align_measured) += meas_step;
      (wave ? s.wave_predicted : s.align_predicted) += sim_step;
      (wave ? s.wave_hits : s.align_hits) += meas_step && sim_step;
      s.list.push_back({{"sweep", a.family},
                        {"from", a.m ? a.m->label() : ""},
                        {"to", b.m ? b.m->label() : ""},
                        {"measured_throughput_fall_pct", meas_fall * 100},
                        {"simulated_throughput_fall_pct", sim_fall * 100},
                        {"kind", wave ? "wave" : "other/alignment"},
                        {"measured_step", meas_step},
                        {"predicted_step", sim_step}});
    }
  }
  return s;
}

}  // namespace gtsim::validation
