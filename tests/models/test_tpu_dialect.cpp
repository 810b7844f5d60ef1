// Rules: the TPU dialect of the kernel IR (kernels_ir/tpu_dialect.hpp). A `tpu_kernel` shares the
// front end (params, let, expressions, loops) and converts to the core program the lowering would
// build: kernels_ir/lib/tpu_matmul.kir simulates within 1% of the lowering's matmul on tpu-v5e.
// Loops with identical trips stay core-program loops. Each dialect's verifier refuses the other's
// instructions with file:line:col; the TPU verifier names bad operands.
#include <gtest/gtest.h>

#include <cstdio>
#include <tuple>

#include "kernels_ir/parser.hpp"
#include "kernels_ir/printer.hpp"
#include "kernels_ir/tpu_dialect.hpp"
#include "kernels_ir/verifier.hpp"
#include "models/tpu/from_ir.hpp"
#include "models/tpu/lowering.hpp"
#include "models/tpu/tpu_model.hpp"
#include "sim/error.hpp"
#include "tests/test_paths.hpp"

using namespace gtsim;

namespace {

using gtsim::testing::src;

std::string first_message(const std::vector<Diagnostic>& d) { return d.empty() ? "" : d[0].str(); }

}  // namespace

TEST(TpuDialect, MatmulExampleMatchesTheLowering) {
  auto cfg = tpu::TpuConfig::load(src("hw_configs/tpu-v5e.yaml"));
  auto k = ir::parse_kernel_file(src("kernels_ir/lib/tpu_matmul.kir"));
  ASSERT_TRUE(k->tpu);
  EXPECT_TRUE(ir::verify(*k).empty()) << first_message(ir::verify(*k));
  EXPECT_EQ(*ir::parse_kernel_string(ir::print_kernel(*k)), *k);

  tpu::TpuModel model(cfg);
  for (auto [m, n, kk] : {std::tuple{2048, 2048, 2048}, std::tuple{1024, 4096, 2048}}) {
    ir::ParamValues pv{{"M", m}, {"N", n}, {"K", kk}};
    auto chip = tpu::chip_program_from_ir(*k, pv, cfg);
    auto from_ir = model.run(chip);

    tpu::OpDesc op;
    op.name = "mm";
    op.m = uint64_t(m), op.n = uint64_t(n), op.k = uint64_t(kk);
    tpu::LowerOptions opt;
    opt.tiling = {512, 512, 1024};
    auto lowered = tpu::lower(op, cfg, opt);
    ASSERT_EQ(lowered.size(), 1u);
    auto ref = model.run(lowered[0]);
    EXPECT_NEAR(from_ir.device_us, ref.device_us, 0.01 * ref.device_us) << m << "x" << n << "x" << kk;
    EXPECT_GT(ref.device_us, 0);
    std::printf("%dx%dx%d: from IR %.3f us, lowering %.3f us\n", m, n, kk, from_ir.device_us, ref.device_us);
    EXPECT_EQ(from_ir.useful_flops, ref.useful_flops);
    EXPECT_EQ(from_ir.hbm_read_bytes, ref.hbm_read_bytes);
    EXPECT_EQ(from_ir.hbm_write_bytes, ref.hbm_write_bytes);
    EXPECT_EQ(from_ir.mxu_useful_macs, ref.mxu_useful_macs);
  }
}

TEST(TpuDialect, IdenticalTripsStayALoop) {
  auto k = ir::parse_kernel_string(R"(tpu_kernel t(n = 6) {
  vmem A : bf16[128, 128] slots 2
  loop i in 0 .. n {
    mxu.load_weights 0, A[0], 128, 128
    mxu.matmul 0, A[0], 64
  }
  loop i in 0 .. 2 {
    vpu.exp A[i], 8, 128
  }
  sync
}
)");
  std::vector<Diagnostic> d;
  auto p = ir::expand_tpu(*k, {}, d);
  ASSERT_TRUE(d.empty()) << first_message(d);
  ASSERT_EQ(p.ops.size(), 7u);
  EXPECT_EQ(p.ops[0].kind, ir::TpuOpKind::kLoop);
  EXPECT_EQ(p.ops[0].count, 6u);
  EXPECT_EQ(p.ops[3].kind, ir::TpuOpKind::kEndLoop);
  EXPECT_EQ(p.ops[4].slot, 0u);  // slot differs between trips: unrolled
  EXPECT_EQ(p.ops[5].slot, 1u);
  EXPECT_EQ(p.ops[5].trans, 1.0f);
  auto cfg = tpu::TpuConfig::load(src("hw_configs/tpu-v5e.yaml"));
  auto core = tpu::core_program_from_ir(*k, {}, cfg);
  EXPECT_EQ(core.steps.size(), 7u);
  EXPECT_EQ(core.steps[0].kind, tpu::StepKind::kLoop);
}

TEST(TpuDialect, GpuVerifierRefusesTpuInstructions) {
  auto k = ir::parse_kernel_string("kernel g() {\n  grid 1\n  block 32\n  dma.wait 0\n}\n", "g.kir");
  auto d = ir::verify(*k);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].str(), "g.kir:4:3: TPU instruction 'dma.wait' in a GPU kernel, expected it in a tpu_kernel");
}

TEST(TpuDialect, TpuVerifierRefusesGpuInstructions) {
  auto k = ir::parse_kernel_string("tpu_kernel t() {\n  buffer x : f32[64]\n  r = ld.global x[0]\n}\n", "t.kir");
  auto d = ir::verify(*k);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].str(), "t.kir:3:3: GPU instruction 'ld.global' in a tpu_kernel, expected dma.*, mxu.*, vpu.* or sync");
}

TEST(TpuDialect, VerifierNamesBadOperands) {
  auto check = [](const std::string& body, const std::string& want) {
    auto k = ir::parse_kernel_string(
        "tpu_kernel t(n = 4) {\n  buffer h : bf16[256, 128]\n  vmem V : bf16[128, 128] slots 2\n" + body + "\n}\n",
        "t.kir");
    auto d = ir::verify(*k);
    ASSERT_FALSE(d.empty()) << body;
    EXPECT_EQ(d[0].str(), want) << body;
  };
  check("  dma.load V[2], h[0], 0", "t.kir:4:14: slot 2 of vmem 'V', expected 0 to 1");
  check("  dma.load h[0], V[0], 0", "t.kir:4:12: expected the destination (a vmem buffer, NAME[slot])");
  check("  dma.load V[0], h[40000], 0", "t.kir:4:20: offset 40000 into 'h' of 32768 elements, expected 0 to 32767");
  check("  dma.store h[0], V[0], 1, 256, 128", "t.kir:4:28: rows 256, expected 1 to 128");
  check("  mxu.matmul 0, V[0]",
        "t.kir:4:3: 'mxu.matmul' has 2 operands, expected `mxu.matmul MXU, V[slot], M[, PASSES]`");
  check("  vpu.frobnicate V[0], 8, 128",
        "t.kir:4:3: unknown TPU instruction 'vpu.frobnicate', expected dma.load, dma.store, dma.wait, "
        "mxu.load_weights, mxu.matmul, vpu.OP or sync");
  check("  sync 1", "t.kir:4:3: 'sync' has 1 operands, expected `sync (no operands)`");
  check("  dma.wait q", "t.kir:4:12: unknown name 'q', expected a parameter, let or loop variable");
  check("  reg r[2]", "t.kir:4:3: 'reg' is a GPU statement, not allowed in a tpu_kernel");
}

TEST(TpuDialect, MachineLimitsFromTheConfig) {
  auto cfg = tpu::TpuConfig::load(src("hw_configs/tpu-v5e.yaml"));
  auto k =
      ir::parse_kernel_string("tpu_kernel t() {\n  vmem V : bf16[128, 128]\n  mxu.load_weights 9, V[0], 128, 128\n}\n");
  EXPECT_TRUE(ir::verify(*k).empty());
  EXPECT_THROW(tpu::core_program_from_ir(*k, {}, cfg), InputError);
}
