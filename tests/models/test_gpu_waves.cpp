// Wave quantization (P10): CTAs are dispatched breadth-first over the SMs; co-resident CTAs share
// an SM's issue slots, so fixed_work (one CTA saturates an SM) steps at every multiple of the SM count.
#include <gtest/gtest.h>

#include "gpu_test_util.hpp"

namespace gtsim::gpu {
namespace {

double cycles_of(const std::string& hw, int ctas) {
  auto p = testing::lib_kernel("fixed_work", {{"ctas", ctas}, {"work", 128}});
  return double(testing::run_one(hw, *p).cycles);
}

TEST(CtaScheduler, OneCtaOverSmCountStartsSecondWave) {
  // A100: 108 SMs.
  double a = cycles_of("a100-40gb", 109) / cycles_of("a100-40gb", 108);
  EXPECT_GT(a, 1.7);
  EXPECT_LT(a, 2.3);
  // H200: 132 SMs, two 1024-thread CTAs fit per SM but one already saturates issue.
  double t132 = cycles_of("h200-sxm", 132), t133 = cycles_of("h200-sxm", 133);
  double t264 = cycles_of("h200-sxm", 264), t265 = cycles_of("h200-sxm", 265);
  double t396 = cycles_of("h200-sxm", 396), t397 = cycles_of("h200-sxm", 397);
  EXPECT_GT(t133 / t132, 1.7);
  EXPECT_LT(t133 / t132, 2.3);
  EXPECT_GT(t265 / t264, 1.3);
  EXPECT_LT(t265 / t264, 1.7);
  EXPECT_GT(t397 / t396, 1.2);
  EXPECT_LT(t397 / t396, 1.45);
  // Within a step the time is flat: 133 and 264 CTAs both need two CTAs' time on the busiest SM.
  EXPECT_NEAR(t264 / t133, 1.0, 0.05);
}

TEST(CtaScheduler, WavesMetricCountsCtasOverResidentSlots) {
  auto p = testing::lib_kernel("fixed_work", {{"ctas", 133}, {"work", 4}});
  KernelResult r = testing::run_one("h200-sxm", *p);
  EXPECT_NEAR(r.waves, 133.0 / 264.0, 1e-12);
  EXPECT_NEAR(r.metrics["launch__waves_per_multiprocessor"].get<double>(), 133.0 / 264.0, 1e-12);
}

// The JSON speaks as `gtsim waves` does (docs/units.md): whole waves, a partial last one counted, and
// how full the last is; the fractional figure stays Nsight Compute's metric.
TEST(CtaScheduler, WavesAreWholeWithTheLastWavesFillAsGtsimWavesCountsThem) {
  struct Case {
    int ctas;
    int64_t waves;
    double fill;
  };
  for (const Case& c : {Case{133, 1, 133.0 / 264.0}, Case{264, 1, 1.0}, Case{265, 2, 1.0 / 264.0}}) {
    auto p = testing::lib_kernel("fixed_work", {{"ctas", c.ctas}, {"work", 4}});
    nlohmann::json j = testing::run_one("h200-sxm", *p).to_json();
    EXPECT_EQ(j["waves"].get<int64_t>(), c.waves) << c.ctas << " CTAs";
    EXPECT_NEAR(j["last_wave_fill"].get<double>(), c.fill, 1e-12) << c.ctas << " CTAs";
    EXPECT_NEAR(j["metrics"]["launch__waves_per_multiprocessor"].get<double>(), c.ctas / 264.0, 1e-12);
  }
}

TEST(CtaScheduler, EverySmGetsOneCtaBeforeAnyGetsTwo) {
  auto p = testing::lib_kernel("fixed_work", {{"ctas", 133}, {"work", 4}});
  KernelResult r = testing::run_one("h200-sxm", *p);
  EXPECT_EQ(r.stats["gpu"]["sm0"]["ctas_launched"], 2);
  for (int s = 1; s < 132; ++s) EXPECT_EQ(r.stats["gpu"]["sm" + std::to_string(s)]["ctas_launched"], 1) << s;
}

}  // namespace
}  // namespace gtsim::gpu
