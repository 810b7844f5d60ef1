// Rules (P13): a 128x128 MXU pads K and N up to the array, so utilization steps at multiples of 128
// (64 uses at most half the array); along the batch M utilization rises smoothly as
// M / (M + fill and drain); with real memory the op turns compute-bound near the ridge
// (peak / HBM bandwidth, about 240 FLOP per byte on v5e).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "kernels_ir/graph/workload.hpp"
#include "models/tpu/compare.hpp"
#include "models/tpu/lowering.hpp"
#include "models/tpu/tpu_model.hpp"
#include "tests/test_paths.hpp"

namespace gtsim::tpu {
namespace {

using gtsim::testing::cfg_path;

TpuConfig v5e(bool free_memory) {
  std::vector<std::string> o;
  if (free_memory)
    o = {"hbm.bandwidth_gbps=1e9", "hbm.latency_ns=0", "dma.issue_cycles=0", "scalar.issue_cycles=0",
         "dispatch.overhead_us=0"};
  return TpuConfig::load(cfg_path("tpu-v5e.yaml"), o);
}

RunResult run_mm(const TpuConfig& cfg, uint64_t m, uint64_t k, uint64_t n) {
  OpDesc op;
  op.name = "mm";
  op.kind = OpKind::kMatmul;
  op.m = m, op.k = k, op.n = n;
  return TpuModel(cfg).run(lower(op, cfg).at(0));
}

// Sweeping one of K, N from 8 to 512: the MXU time is flat inside each band of 128 and jumps at
// 129, 257, 385; utilization grows linearly inside a band and drops after each multiple of 128.
void sweep_padded_dim(bool sweep_k) {
  TpuConfig cfg = v5e(true);
  double prev_cycles = 0, prev_util = 0;
  for (uint64_t d = 8; d <= 512; d += 8) {
    RunResult r = sweep_k ? run_mm(cfg, 4096, d, 512) : run_mm(cfg, 4096, 512, d);
    double expected_fill = double(d) / double((d + 127) / 128 * 128);
    EXPECT_NEAR(r.mxu_array_fill, expected_fill, 1e-9) << d;
    if (d == 64) {
      EXPECT_LE(r.mxu_array_fill, 0.5 + 1e-9);
      EXPECT_LE(r.mxu_utilization, 0.5);
    }
    if (d > 8) {
      bool crossed = (d - 8) % 128 == 0;  // d - 8 was a multiple of 128: a new band starts at d
      if (crossed) {
        EXPECT_GT(r.cycles, 1.3 * prev_cycles) << "no step at " << d;
        EXPECT_LT(r.mxu_utilization, prev_util) << d;
      } else {
        EXPECT_NEAR(double(r.cycles), prev_cycles, 0.01 * prev_cycles) << "time must be flat inside a band: " << d;
        EXPECT_GT(r.mxu_utilization, prev_util) << d;
      }
    }
    prev_cycles = double(r.cycles), prev_util = r.mxu_utilization;
  }
}

TEST(TpuPadding, UtilizationStepsAtMultiplesOf128AlongN) { sweep_padded_dim(false); }
TEST(TpuPadding, UtilizationStepsAtMultiplesOf128AlongK) { sweep_padded_dim(true); }

TEST(TpuPadding, UtilizationRisesSmoothlyWithBatchAsMOverMPlusFillAndDrain) {
  TpuConfig cfg = v5e(true);
  double R = cfg.mxu.rows, C = cfg.mxu.cols, prev = 0;
  for (uint64_t m = 8; m <= 8192; m *= 2) {
    RunResult r = run_mm(cfg, m, 256, 256);  // 4 folds: one per MXU
    double model = double(m) / (double(m) + 2 * R + C - 2);
    EXPECT_NEAR(r.mxu_utilization, model, 0.01 * model + 0.002) << "M=" << m;
    EXPECT_GT(r.mxu_utilization, prev) << "M=" << m;
    prev = r.mxu_utilization;
  }
}

TEST(TpuPadding, TurnsComputeBoundNearTheRidge) {
  TpuConfig cfg = v5e(false);
  double ridge = cfg.ridge_flop_per_byte();
  EXPECT_NEAR(ridge, 240, 5);  // [SB]: 1.97e14 / 8.2e11
  double flip_m = 0, flip_ai = 0;
  std::string prev = "";
  for (uint64_t m = 16; m <= 2048; m += 16) {
    RunResult r = run_mm(cfg, m, 8192, 8192);
    if (prev.rfind("memory", 0) == 0 && r.bound.rfind("compute", 0) == 0 && flip_m == 0)
      flip_m = double(m), flip_ai = r.arithmetic_intensity;
    prev = r.bound;
  }
  std::cout << "compute-bound from M = " << flip_m << " (arithmetic intensity " << flip_ai << " FLOP/B, ridge " << ridge
            << ")\n";
  ASSERT_GT(flip_m, 0) << "never turned compute-bound";
  EXPECT_NEAR(flip_ai, ridge, 0.2 * ridge);
}

// Rule: XLA lays a flat (1-D) vector out in rows of 128 lanes, so an elementwise op on 2^20 floats
// moves its input and output once (within burst rounding), not as one row padded to 8 sublanes (8x).
// A 2-D tensor of 8 rows x 2^17 is the same bytes: the layouts agree.
TEST(TpuPadding, FlatVectorIsLaidOutInRowsOf128LanesNotPaddedEightfold) {
  auto bytes = [](const std::string& shape) {
    auto w = wl::Workload::load_string("name: flat\ntensors:\n  x: {dtype: f32, shape: " + shape +
                                       "}\nops:\n  - {name: sq, op: elementwise, expr: \"x * x\", out: y}\n");
    auto rep = run_tpu_workload(v5e(false), w);
    EXPECT_EQ(rep.ops.size(), 1u);
    return rep.ops.at(0).hbm_bytes;
  };
  const double ideal = 2.0 * (1 << 20) * 4;  // x read once, y written once
  double flat = double(bytes("[1048576]")), rows = double(bytes("[8, 131072]"));
  EXPECT_NEAR(flat, ideal, 0.05 * ideal);
  EXPECT_NEAR(rows, ideal, 0.05 * ideal);
}

}  // namespace
}  // namespace gtsim::tpu
