// Rule: in textbook mode the MXU runs SCALE-Sim's closed form: folds = ceil(K/rows) x ceil(N/cols),
// each 2 x rows + cols + M - 2 cycles, back to back. Checked on a grid of shapes from 64 to 8192.
#include <gtest/gtest.h>

#include <cmath>

#include "models/tpu/lowering.hpp"
#include "models/tpu/tpu_model.hpp"
#include "tests/test_paths.hpp"

namespace gtsim::tpu {
namespace {

using gtsim::testing::cfg_path;

// Memory made free (no HBM, DMA, dispatch or issue cost), so only the MXU is timed.
TpuConfig free_memory_textbook(uint32_t mxus) {
  return TpuConfig::load(cfg_path("tpu-v5e.yaml"),
                         {"mxu.timing=textbook", "mxu.count=" + std::to_string(mxus),
                          "chip.peak_bf16_tflops=" + std::to_string(49.152 * mxus), "hbm.bandwidth_gbps=1e9",
                          "hbm.latency_ns=0", "dma.issue_cycles=0", "scalar.issue_cycles=0", "dispatch.overhead_us=0",
                          "vpu.alu_ops_per_cycle=1e6", "vmem.bandwidth_gbps=1e12"});
}

double closed_form(uint64_t M, uint64_t K, uint64_t N, uint64_t R, uint64_t C) {
  return double((K + R - 1) / R) * double((N + C - 1) / C) * double(2 * R + C + M - 2);
}

OpDesc mxu_closed_form_matmul(uint64_t m, uint64_t k, uint64_t n) {
  OpDesc op;
  op.name = "mm";
  op.kind = OpKind::kMatmul;
  op.m = m, op.k = k, op.n = n;
  return op;
}

TEST(TpuMxuClosedForm, TextbookMatchesScaleSimFormOnAGridOfShapes) {
  TpuConfig cfg = free_memory_textbook(1);
  TpuModel model(cfg);
  const uint64_t sizes[] = {64, 200, 1024, 8192};
  for (uint64_t m : sizes)
    for (uint64_t k : sizes)
      for (uint64_t n : sizes) {
        OpDesc op = mxu_closed_form_matmul(m, k, n);
        LowerOptions opt;
        opt.tiling = {m, 0, 0};  // the whole M streams per fold, as in the closed form
        auto progs = lower(op, cfg, opt);
        ASSERT_EQ(progs.size(), 1u);
        RunResult r = model.run(progs[0]);
        double cf = closed_form(m, k, n, 128, 128);
        EXPECT_NEAR(double(r.mxu_busy_cycles), cf, 1e-3 * cf) << m << "x" << k << "x" << n;
        // The whole run, memory free: the vector unit accumulates while the MXUs stream, so it adds nothing.
        EXPECT_NEAR(double(r.cycles), cf, 1e-3 * cf) << m << "x" << k << "x" << n;
      }
}

}  // namespace
}  // namespace gtsim::tpu
