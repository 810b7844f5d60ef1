// Rule (issue 38): a step is a fall in throughput between neighbouring sizes of a sweep. A GEMM N sweep
// over 132 SMs: up to 132 tiles one wave, then a second wave at 133 tiles costs a whole tile's time, so
// the throughput falls there and recovers as the second wave fills.
#include <gtest/gtest.h>

#include <functional>

#include "validation/validate.hpp"

namespace {
using namespace gtsim::validation;

// tiles = 128 .. 140 (x), work = tiles, measured time = ceil(tiles / 132) waves of 10 us each
std::vector<PointResult> wave_sweep(const std::function<double(int tiles, double meas)>& simulated) {
  std::vector<PointResult> v;
  for (int tiles = 128; tiles <= 140; ++tiles) {
    PointResult p;
    p.family = p.sweep = "gemm_tiled/n_sweep";
    p.role = "held-out";
    p.x = tiles;
    p.work = tiles;
    p.meas = 10.0 * ((tiles + 131) / 132);
    p.meas_spread = 0.01;
    p.meas_waves = tiles / 132.0;
    p.sim = simulated(tiles, p.meas);
    v.push_back(p);
  }
  return v;
}

TEST(Steps, AModelWhoseTimeOnlyGrowsWithWorkFindsNoStep) {
  // time proportional to the work: throughput flat, so no predicted fall anywhere
  StepStats s = count_steps(wave_sweep([](int tiles, double) { return 10.0 * tiles / 132.0; }));
  EXPECT_EQ(s.measured, 1u);  // 132 -> 133 tiles: the second wave
  EXPECT_EQ(s.wave_measured, 1u);
  EXPECT_EQ(s.predicted, 0u);
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.recall(), 0.0);
}

TEST(Steps, AModelThatHasTheWaveFindsTheStepAndNoOther) {
  StepStats s = count_steps(wave_sweep([](int, double meas) { return meas * 1.03; }));  // 3% slow, same shape
  EXPECT_EQ(s.measured, 1u);
  EXPECT_EQ(s.predicted, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.wave_hits, 1u);
  EXPECT_DOUBLE_EQ(s.precision(), 1.0);
  EXPECT_DOUBLE_EQ(s.recall(), 1.0);
}

TEST(Steps, AFallWithinTheRepeatsNoiseIsNoMeasuredStep) {
  auto v = wave_sweep([](int, double meas) { return meas; });
  for (auto& p : v) p.meas_spread = 0.2 * p.meas;  // 20% spread: a 50% fall is within 3x of it
  StepStats s = count_steps(v);
  EXPECT_EQ(s.measured, 0u);
  EXPECT_EQ(s.predicted, 1u);  // the model's fall is still a prediction, now a false one
  EXPECT_EQ(s.hits, 0u);
}

}  // namespace
