// The workload graph: reader, DAG check, fusion and recompute passes (byte counts from the graph).
#include <gtest/gtest.h>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/graph/passes.hpp"
#include "kernels_ir/parser.hpp"
#include "models/analytic/gemm_plan.hpp"
#include "sim/config.hpp"
#include "tests/test_paths.hpp"

using namespace gtsim;
using namespace gtsim::wl;

namespace {
using gtsim::testing::src;
Workload passed(Workload w, bool fusion, bool recompute) {
  PassOptions o;
  o.fusion = fusion;
  o.recompute = recompute;
  run_passes(w, o);
  return w;
}
}  // namespace

TEST(WorkloadGraph, ExpressionExpandsToOneNodePerOperator) {
  auto w = Workload::load_file(src("kernels_ir/workloads/fusion_sincos.yaml"));
  EXPECT_EQ(w.op_count(), 5u);  // sin, cos, pow, pow, add
}

TEST(WorkloadGraph, FusionCutsSinCosTrafficFromElevenTensorPassesToTwo) {
  auto w = Workload::load_file(src("kernels_ir/workloads/fusion_sincos.yaml"));
  const uint64_t tensor = w.tensor("x")->bytes();
  EXPECT_EQ(w.total_min_bytes(), 11 * tensor);
  auto f = passed(w, true, true);
  EXPECT_EQ(f.op_count(), 1u);
  EXPECT_EQ(f.total_min_bytes(), 2 * tensor);
}

TEST(WorkloadGraph, RecomputeSigmoidChainCostsFiveAccessesStoredEight) {
  auto w = Workload::load_file(src("kernels_ir/workloads/recompute_sigmoid.yaml"));
  const uint64_t tensor = w.tensor("x")->bytes();
  EXPECT_EQ(passed(w, true, false).total_min_bytes(), 8 * tensor);
  EXPECT_EQ(passed(w, true, true).total_min_bytes(), 5 * tensor);
}

TEST(WorkloadGraph, CycleIsAnInputErrorWithPosition) {
  const char* y = R"(
name: cyc
tensors:
  x: {dtype: f32, shape: [16]}
ops:
  - {name: a, op: elementwise, expr: "x + c", out: b}
  - {name: c, op: elementwise, expr: "b * 2", out: c}
)";
  try {
    Workload::load_string(y, "cyc.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cyc.yaml:"), std::string::npos) << e.what();
  }
}

TEST(WorkloadGraph, NaiveAttentionMovesTwentyTimesFlashBytesAndGrowsWithT) {
  double prev = 0;
  for (int64_t T : {2048, 4096}) {
    auto naive = Workload::load_file(src("kernels_ir/workloads/attention_naive.yaml"), {{"T", T}});
    auto flash = Workload::load_file(src("kernels_ir/workloads/attention_flash.yaml"), {{"T", T}});
    double ratio = double(naive.total_min_bytes()) / double(flash.total_min_bytes());
    EXPECT_GE(ratio, T == 4096 ? 20.0 : 10.0) << "T=" << T;
    EXPECT_GT(ratio, prev);
    prev = ratio;
  }
}

TEST(WorkloadGraph, OpsInOrderExposeShapesForOtherTargets) {
  auto w = Workload::load_file(src("kernels_ir/workloads/transformer_block.yaml"));
  auto ops = w.ops_in_order();
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops.front()->kind, OpKind::kMatmul);
  for (const Op* op : ops) {
    EXPECT_GT(op->flops(), 0u) << op->name;
    EXPECT_GT(op->min_bytes(), 0u) << op->name;
  }
}

TEST(GemmWaves, A100Tile256x128GivesNinetyEightTilesInOneWaveAt1792) {
  auto hw = ConfigNode::load_file(src("hw_configs/a100-40gb.yaml"));
  auto t = analytic::parse_tile("256x128");
  auto p = analytic::plan_gemm(*hw, 1792, 1792, 1792, t, analytic::GemmSchedule::kDataParallel);
  EXPECT_EQ(p.tiles, 98);
  EXPECT_EQ(p.ctas_per_sm, 1u);
  EXPECT_EQ(p.waves, 1);
  EXPECT_TRUE(p.aligned());
  auto q = analytic::plan_gemm(*hw, 1793, 1793, 1793, t, analytic::GemmSchedule::kDataParallel);
  EXPECT_EQ(q.tiles, 120);
  EXPECT_EQ(q.waves, 2);
  EXPECT_FALSE(q.aligned());
  auto r = analytic::plan_gemm(*hw, 1800, 1800, 1800, t, analytic::GemmSchedule::kDataParallel);
  EXPECT_EQ(r.tiles, 120);
  EXPECT_EQ(r.waves, 2);
  EXPECT_TRUE(r.aligned());
}

TEST(GemmWaves, PersistentScheduleQuantizesAsTilesPerCta) {
  auto hw = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"));
  auto t = analytic::parse_tile("128x128");
  auto p = analytic::plan_gemm(*hw, 2304, 4096, 4096, t, analytic::GemmSchedule::kPersistent);
  EXPECT_EQ(p.grid, p.wave_size);
  EXPECT_EQ(p.tiles_per_cta_max, (p.tiles + p.grid - 1) / p.grid);
}

// Buffer placement (ir::Program::build with a BufferPlacement): a named buffer goes to the start of
// its region, honouring its alignment; the others keep the default placement.
TEST(WorkloadGraph, ProgramPlacesNamedBuffersInTheirRegions) {
  auto k = ir::parse_kernel_string(R"(kernel p(N = 1024) {
  grid 1
  block 32
  buffer a : f32[N]
  buffer b : f32[N] align 16
  buffer c : f32[N]
  st.global c[tid.x], x
}
)",
                                   "<p>");
  auto plain = ir::Program::build(*k, {});
  const uint64_t ra = uint64_t(1) << 40, rb = (uint64_t(1) << 40) + (uint64_t(8) << 20);
  auto placed = ir::Program::build(*k, {}, {{"a", ra}, {"b", rb}, {"not_a_buffer", 0}});
  ASSERT_EQ(placed->buffers().size(), 3u);
  EXPECT_EQ(placed->buffers()[0].base, ra);
  EXPECT_EQ(placed->buffers()[1].base, rb + 16);                   // align 16: a multiple of 16, not of 32
  EXPECT_EQ(placed->buffers()[2].base, plain->buffers()[0].base);  // unnamed: default cursor
}

TEST(WorkloadGraph, ParamOverridesFromTheCommandLine) {
  auto p = parse_param_overrides({"T=8192", "n=2^26"});
  EXPECT_EQ(p.at("T"), 8192);
  EXPECT_EQ(p.at("n"), int64_t(1) << 26);
  EXPECT_THROW(parse_param_overrides({"T"}), InputError);
  auto w = Workload::load_file(src("kernels_ir/workloads/attention_flash.yaml"), {{"T", p.at("T")}});
  EXPECT_EQ(w.ops_in_order()[0]->attn.T, 8192);
}

// ---- dtype-changing ops: casts, promotion, softmax's dtype ----

namespace {
Workload cast_workload(const std::string& ops, const std::string& extra_tensors = "") {
  return Workload::load_string(R"(
name: casts
params: {n: 4096}
tensors:
  x: {dtype: bf16, shape: [4, n]}
  y: {dtype: f32, shape: [4, n]}
)" + extra_tensors + "ops:\n" + ops,
                               "casts.yaml");
}
std::string error_of(const std::string& ops, const std::string& extra_tensors = "") {
  try {
    cast_workload(ops, extra_tensors);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

// A cast reads each element in its dtype and writes it in another: 2 + 4 bytes per element from bf16
// to f32, no arithmetic.
TEST(WorkloadGraph, ACastReadsOneDtypeAndWritesAnother) {
  auto w = cast_workload("  - {name: up, op: cast, input: x, dtype: f32, out: x32}\n");
  ASSERT_EQ(w.op_count(), 1u);
  const Op& op = *w.ops_in_order()[0];
  EXPECT_EQ(op.kind, OpKind::kElementwise);
  EXPECT_EQ(w.tensor("x32")->dtype, DType::kF32);
  EXPECT_EQ(op.min_bytes(), 4u * 4096 * (2 + 4));
  EXPECT_EQ(op.flops(), 0u);
}

TEST(WorkloadGraph, ACastToItsOwnDtypeOrToAnUnknownOneIsAnErrorAtItsKey) {
  std::string same = error_of("  - {name: up, op: cast, input: x, dtype: bf16, out: x2}\n");
  EXPECT_NE(same.find("casts.yaml:"), std::string::npos) << same;
  EXPECT_NE(same.find("already bf16"), std::string::npos) << same;
  std::string unknown = error_of("  - {name: up, op: cast, input: x, dtype: f31, out: x2}\n");
  EXPECT_NE(unknown.find("unknown dtype 'f31'"), std::string::npos) << unknown;
  std::string missing = error_of("  - {name: up, op: cast, input: x, out: x2}\n");
  EXPECT_NE(missing.find("missing key 'dtype'"), std::string::npos) << missing;
}

// No op converts unless asked: an output declared in another dtype than the op writes is an error
// that names both dtypes, where it used to be written silently in the declared one.
TEST(WorkloadGraph, AnOutputDeclaredInAnotherDtypeIsAnErrorNamingBoth) {
  std::string e = error_of("  - {name: twice, op: elementwise, expr: \"x * 2\", out: z}\n",
                           "  z: {dtype: f32, shape: [4, 4096]}\n");
  EXPECT_NE(e.find("casts.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("declared f32, the op writes bf16"), std::string::npos) << e;
  // with dtype: f32 the same op writes the declared tensor
  auto w = cast_workload("  - {name: twice, op: elementwise, expr: \"x * 2\", dtype: f32, out: z}\n",
                         "  z: {dtype: f32, shape: [4, 4096]}\n");
  EXPECT_EQ(w.ops_in_order()[0]->min_bytes(), 4u * 4096 * (2 + 4));
}

// PyTorch's type promotion: bf16 + f32 computes and writes f32.
TEST(WorkloadGraph, ElementwisePromotesToItsWidestInput) {
  auto w = cast_workload("  - {name: add, op: elementwise, expr: \"x + y\", out: s}\n");
  EXPECT_EQ(w.tensor("s")->dtype, DType::kF32);
  EXPECT_EQ(w.ops_in_order()[0]->min_bytes(), 4u * 4096 * (2 + 4 + 4));
}

// softmax(x, dim=-1, dtype=torch.float32): the row read in bf16, written in f32.
TEST(WorkloadGraph, SoftmaxWritesTheDtypeItIsAskedFor) {
  auto w = cast_workload("  - {name: sm, op: softmax, input: x, dtype: f32, out: p}\n");
  EXPECT_EQ(w.tensor("p")->dtype, DType::kF32);
  EXPECT_EQ(w.ops_in_order()[0]->min_bytes(), 4u * 4096 * (2 + 4));
}

// Fusing a bf16 scale with the cast that follows it reads bf16 once and writes f32 once (the scaled
// bf16 tensor is never stored), as torch.compile's fused kernel does.
TEST(WorkloadGraph, FusingAScaleWithItsCastReadsBf16OnceAndWritesF32Once) {
  auto w = cast_workload(
      "  - {name: scale, op: elementwise, expr: \"x * 0.125\", out: xs}\n"
      "  - {name: up, op: cast, input: xs, dtype: f32, out: x32}\n");
  EXPECT_EQ(w.total_min_bytes(), 4u * 4096 * ((2 + 2) + (2 + 4)));
  auto f = passed(w, true, true);
  ASSERT_EQ(f.op_count(), 1u);
  EXPECT_EQ(f.total_min_bytes(), 4u * 4096 * (2 + 4));
  EXPECT_EQ(f.ops_in_order()[0]->outputs[0].dtype, DType::kF32);
}

// PyTorch's eager naive attention: QK^T, scale, cast to f32, f32 softmax, cast back, PV; its scores
// cross HBM four more times than the three-kernel form's (bf16 S and P written and read once each).
TEST(WorkloadGraph, PyTorchNaiveAttentionIsSixOpsWithItsScoresInBf16AndF32) {
  auto eager = Workload::load_file(src("kernels_ir/workloads/attention_naive_pytorch.yaml"));
  auto three = Workload::load_file(src("kernels_ir/workloads/attention_naive.yaml"));
  EXPECT_EQ(eager.op_count(), 6u);
  EXPECT_EQ(three.op_count(), 3u);
  const double scores = 4.0 * 16 * 4096 * 4096;  // elements of S per [B, H, T, T]
  const double extra = double(eager.total_min_bytes()) - double(three.total_min_bytes());
  // scale r+w bf16 (4 B), cast r bf16 w f32 (6 B), softmax f32 instead of bf16 (+4 B), cast r f32 w bf16 (6 B)
  EXPECT_NEAR(extra / scores, 4.0 + 6.0 + 4.0 + 6.0, 0.01);
}
