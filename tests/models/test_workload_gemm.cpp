// GEMM waves (P10), alignment (P9) and the roofline microbenchmarks (P2) on the simulated H200.
// The GEMM sweeps are the expensive part of the suite: a few points each, sampled per wave.
#include <gtest/gtest.h>

#include "models/analytic/gemm_plan.hpp"
#include "models/analytic/roofline.hpp"
#include "sim/config.hpp"

using namespace gtsim;

namespace {
std::string src(const std::string& rel) { return std::string(GTSIM_SOURCE_DIR) + "/" + rel; }
std::shared_ptr<ConfigNode> h200() { return ConfigNode::load_file(src("hw_configs/h200-sxm.yaml")); }
}  // namespace

// NVIDIA's Matrix Multiplication Background example: M = 2304, K = 4096, N a multiple of 128. With
// 256x128 tiles (one CTA per SM, 132 per wave) the tile count is 9 N / 128: 126 at N = 1792 (one
// wave), 135 at N = 1920 (two waves, the second holding 3 tiles): throughput dips exactly there.
TEST(WorkloadGemm, H200NSweepDipsWhereTilesPassTheWaveSize_Slow) {
  auto hw = h200();
  auto tile = analytic::parse_tile("256x128");
  std::vector<double> tf;
  std::vector<int64_t> waves, per_cta;
  for (int64_t n : {1664, 1792, 1920}) {
    auto p = analytic::plan_gemm(*hw, 2304, n, 4096, tile, analytic::GemmSchedule::kDataParallel);
    waves.push_back(p.waves);
    tf.push_back(analytic::simulate_gemm(*hw, p).tflops);
    auto q = analytic::plan_gemm(*hw, 2304, n, 4096, tile, analytic::GemmSchedule::kPersistent);
    per_cta.push_back(q.tiles_per_cta_max);
  }
  EXPECT_EQ(waves, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(per_cta, (std::vector<int64_t>{1, 1, 2}));  // persistent: tiles per CTA steps instead
  EXPECT_GE(tf[1], 0.95 * tf[0]) << tf[0] << " " << tf[1];  // no dip while the wave fills
  EXPECT_LT(tf[2], 0.75 * tf[1]) << tf[1] << " " << tf[2];  // the dip
}

// The lecture's alignment curve: square bf16 GEMMs near 1024; the largest power of two dividing n
// sets the global vector width (16 / 8 / 4 / 2 bytes), and throughput orders by it.
TEST(WorkloadGemm, AlignmentOrdersThroughputByPowerOfTwoDividingN_Slow) {
  auto hw = h200();
  auto tile = analytic::parse_tile("128x128");
  auto tflops = [&](int64_t n) {
    auto p = analytic::plan_gemm(*hw, n, n, n, tile, analytic::GemmSchedule::kDataParallel);
    return analytic::simulate_gemm(*hw, p).tflops;
  };
  // Means per class (single points carry a few % of L2/partition noise: 1032 alone sits below 1028).
  double odd = tflops(1025), two = tflops(1026), four = (tflops(1028) + tflops(1036)) / 2,
         eight = (tflops(1032) + tflops(1040) + tflops(1048)) / 3;
  EXPECT_LT(odd, two);
  EXPECT_LT(two, four);
  EXPECT_LT(four, eight) << odd << " " << two << " " << four << " " << eight;
}

TEST(WorkloadGemm, VectorWidthFollowsTheLargestPowerOfTwo) {
  EXPECT_EQ(analytic::vector_elems(1031), 1);
  EXPECT_EQ(analytic::vector_elems(1030), 2);
  EXPECT_EQ(analytic::vector_elems(1028), 4);
  EXPECT_EQ(analytic::vector_elems(1032), 8);
  EXPECT_EQ(analytic::vector_elems(1040), 8);
}

// P2: the roofline from the model's own microbenchmarks sits near the config's datasheet one.
TEST(WorkloadGemm, RooflineRidgeFromMicrobenchmarksNearConfigRidge) {
  auto hw = h200();
  double bw = analytic::attained_dram_bandwidth(*hw, int64_t(1) << 24);
  double cfg_bw = analytic::config_hbm_bytes_per_s(*hw);
  EXPECT_GT(bw, 0.6 * cfg_bw);
  EXPECT_LT(bw, 1.05 * cfg_bw);
  double bf16 = analytic::attained_peak_flops(*hw, ir::DType::kBf16, 32);
  double cfg = analytic::config_peak_flops(*hw, ir::DType::kBf16);
  EXPECT_GT(bf16, 0.7 * cfg);
  EXPECT_LT(bf16, 1.02 * cfg);
  double ridge = bf16 / bw;
  EXPECT_GT(ridge, 50.0);  // far right of any elementwise kernel (< 2 flop/B)
}
