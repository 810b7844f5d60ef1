// Workload behaviour on the simulated GPU (P4, P5, P6, P10): DRAM bytes and times from GpuModel.
#include <gtest/gtest.h>

#include "models/analytic/waves.hpp"
#include "models/analytic/workload_run.hpp"
#include "sim/config.hpp"
#include "tests/test_paths.hpp"

using namespace gtsim;

namespace {
using gtsim::testing::src;
std::shared_ptr<ConfigNode> workload_sim_h200() { return ConfigNode::load_file(src("hw_configs/h200-sxm.yaml")); }
// The H200 with its L2 cut to 4 MiB: the byte laws of fusion and recompute hold once the tensors are
// several times the L2, and with a smaller L2 smaller tensors (shorter runs) already are.
std::shared_ptr<ConfigNode> h200_small_l2() {
  return ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"), {"l2.size_bytes=4194304"});
}
analytic::WorkloadReport run(const std::string& yaml, const std::map<std::string, int64_t>& params, bool fusion,
                             bool recompute = true) {
  auto hw = h200_small_l2();
  auto w = wl::Workload::load_file(src(yaml), params);
  analytic::WorkloadRunOptions o;
  o.fusion = fusion;
  o.recompute = recompute;
  return analytic::run_workload(*hw, w, o);
}
}  // namespace

// 2^24 fp32 = 64 MiB per tensor, 16x the cut L2 (as 2^28 is 17x the whole H200 L2: the dirty lines
// left in the L2 at the end, never written back, are the same small share).
TEST(WorkloadSim, FusionMovesElevenPassesInsteadOfTwoAndRunsThreeTimesFaster_Slow) {
  auto unfused = run("kernels_ir/workloads/fusion_sincos.yaml", {{"n", 1 << 24}}, false);
  auto fused = run("kernels_ir/workloads/fusion_sincos.yaml", {{"n", 1 << 24}}, true);
  ASSERT_EQ(unfused.kernels.size(), 5u);
  ASSERT_EQ(fused.kernels.size(), 1u);
  const double tensor = double(uint64_t(1) << 24) * 4;
  EXPECT_NEAR(double(fused.dram_bytes) / tensor, 2.0, 0.1) << fused.text;
  EXPECT_NEAR(double(unfused.dram_bytes) / double(fused.dram_bytes), 5.5, 0.275) << unfused.text << fused.text;
  EXPECT_GE(unfused.total_us / fused.total_us, 3.0) << unfused.text << fused.text;
}

// 2^22 fp32 = 16 MiB per tensor (4x the cut L2).
TEST(WorkloadSim, RecomputeSigmoidChainMovesFiveTensorsAgainstEightStored_Slow) {
  auto stored = run("kernels_ir/workloads/recompute_sigmoid.yaml", {{"n", 1 << 22}}, true, false);
  auto recomputed = run("kernels_ir/workloads/recompute_sigmoid.yaml", {{"n", 1 << 22}}, true, true);
  const double tensor = double(uint64_t(1) << 22) * 4;
  // 8 tensors within 7.5%: when the L2 writes its dirty lines back moves with the SMs' store rate
  // (noc.store_bytes_per_cycle_per_sm), and with it how much of a tensor is still there to be read
  EXPECT_NEAR(double(stored.dram_bytes) / tensor, 8.0, 0.6) << stored.text;
  EXPECT_NEAR(double(recomputed.dram_bytes) / tensor, 5.0, 0.25) << recomputed.text;
  EXPECT_LT(recomputed.total_us, stored.total_us);
}

// L2 carry-over: at 2^21 fp32 (8 MiB per tensor) the unfused chain fits in the L2, so a consumer
// reads its producer's output from the L2; on fresh machines (carry_l2 = false) it reads DRAM.
TEST(WorkloadSim, SmallTensorsCarryOverThroughL2BetweenKernels) {
  auto hw = workload_sim_h200();
  auto w = wl::Workload::load_file(src("kernels_ir/workloads/fusion_sincos.yaml"), {{"n", 1 << 21}});
  analytic::WorkloadRunOptions o;
  o.fusion = false;
  auto carried = analytic::run_workload(*hw, w, o);
  o.carry_l2 = false;
  auto cold = analytic::run_workload(*hw, w, o);
  ASSERT_EQ(carried.kernels.size(), 5u);
  const double tensor = double(1 << 21) * 4;
  // sin and cos read x (cold the first time); the squares and the add read L2-resident tensors.
  uint64_t rd_carried = 0, rd_cold = 0;
  for (size_t i = 1; i < 5; ++i)
    rd_carried += carried.kernels[i].dram_read_bytes, rd_cold += cold.kernels[i].dram_read_bytes;
  EXPECT_LT(double(rd_carried), 0.5 * tensor) << carried.text;
  EXPECT_GT(double(rd_cold), 4.0 * tensor) << cold.text;
  EXPECT_LT(carried.total_us, cold.total_us);
}

// Launch gaps: back to back into a stream, every kernel pays the graph launch's overhead plus the
// stream's gap (launch.stream_gap_us); replayed as one CUDA graph, the sequence pays one launch. The
// kernels' execution is the same in both.
TEST(WorkloadSim, StreamLaunchesPayTheStreamGapPerKernelAGraphOneLaunch) {
  auto hw = workload_sim_h200();
  auto w = wl::Workload::load_file(src("kernels_ir/workloads/fusion_sincos.yaml"), {{"n", 1 << 16}});
  analytic::WorkloadRunOptions o;
  o.fusion = false;
  auto stream = analytic::run_workload(*hw, w, o);
  o.cuda_graph = true;
  auto graph = analytic::run_workload(*hw, w, o);
  ASSERT_EQ(stream.kernels.size(), 5u);
  const auto& launch = hw->at("launch");
  const double overhead = launch.param<double>("overhead_us").get(), gap = launch.param<double>("stream_gap_us").get();
  ASSERT_GT(gap, 0.5);  // the H200's calibrated gap (validation/data/h200: stream minus graph time)
  EXPECT_NEAR(stream.total_us - graph.total_us, 5 * (overhead + gap) - overhead, 0.01 * stream.total_us)
      << stream.text << graph.text;
}

TEST(WorkloadSim, LowPrecisionHalvesMemoryBoundTimePerStep) {
  // 2^23 elements: 32, 16 and 8 MiB in and out, above the cut L2
  const std::string head = "name: scale\nparams: {n: 2^23}\ntensors:\n  x: {dtype: ";
  const std::string tail = ", shape: [n]}\nops:\n  - {name: scale, op: elementwise, expr: \"x * 2\", out: y}\n";
  auto hw = h200_small_l2();
  std::vector<double> t;
  for (std::string dt : {"f32", "bf16", "fp8"}) {
    std::string text = head + dt + tail;
    auto w = wl::Workload::load_string(text, "scale.yaml");
    analytic::WorkloadRunOptions o;
    o.cuda_graph = true;  // the launch overhead would blur the halving
    t.push_back(analytic::run_workload(*hw, w, o).total_us);
  }
  EXPECT_NEAR(t[0] / t[1], 2.0, 0.3) << t[0] << " " << t[1];
  EXPECT_NEAR(t[1] / t[2], 2.0, 0.3) << t[1] << " " << t[2];
}

TEST(WorkloadSim, A100WaveCliffFrom1792To1800) {
  auto hw = ConfigNode::load_file(src("hw_configs/a100-40gb.yaml"));
  analytic::WavesRequest r;
  r.suggestions = false;
  r.tile = "256x128";  // NVIDIA's example's tile: one CTA per SM, 108 per wave
  r.M = r.N = r.K = 1792;
  auto a = analytic::waves(*hw, r);
  r.M = r.N = r.K = 1800;
  auto b = analytic::waves(*hw, r);
  EXPECT_EQ(a.json["tiles"], 98);
  EXPECT_EQ(a.json["waves"], 1);
  EXPECT_EQ(b.json["tiles"], 120);
  EXPECT_EQ(b.json["waves"], 2);
  double ratio = b.json["time_us"].get<double>() / a.json["time_us"].get<double>();
  EXPECT_GE(ratio, 1.4) << a.text << b.text;
  EXPECT_LE(ratio, 2.6) << a.text << b.text;
}

// A bf16 -> f32 cast of 2^22 elements (8 MiB in, 16 MiB out; 2x and 4x the cut L2): DRAM reads are
// the bf16 tensor, and the f32 tensor is written back or still dirty in the L2 at the end.
TEST(WorkloadSim, ACastReadsItsInputDtypeAndWritesItsOutputDtype) {
  auto hw = h200_small_l2();
  auto w = wl::Workload::load_string(R"(
name: cast
tensors:
  x: {dtype: bf16, shape: [4194304]}
ops:
  - {name: up, op: cast, input: x, dtype: f32, out: y}
)");
  auto r = analytic::run_workload(*hw, w, analytic::WorkloadRunOptions{});
  ASSERT_EQ(r.kernels.size(), 1u);
  const double n = 4194304;
  EXPECT_NEAR(double(r.kernels[0].dram_read_bytes) / (2 * n), 1.0, 0.03) << r.text;
  EXPECT_NEAR(double(r.kernels[0].dram_write_bytes + r.kernels[0].l2_dirty_bytes_at_end) / (4 * n), 1.0, 0.03)
      << r.text;
}

// Eager PyTorch runs naive attention as six kernels (QK^T, scale, cast to f32, f32 softmax, cast back,
// PV): three more passes over the T x T scores than the three-kernel form, so further from flash. The
// matmuls run the kernel a library picks (on Hopper TMA + wgmma) while the flash kernel is FA2's
// mma.sync, so the three-kernel form's margin over flash is its scores' traffic and launches.
TEST(WorkloadSim, EagerPyTorchNaiveAttentionIsSlowerThanTheThreeKernelFormAndFlash) {
  auto hw = workload_sim_h200();
  auto time_of = [&](const std::string& yaml) {
    auto w = wl::Workload::load_file(src("kernels_ir/workloads/" + yaml), {{"B", 1}, {"H", 4}, {"T", 512}});
    analytic::WorkloadRunOptions o;
    o.fusion = false;  // eager: one kernel per op
    auto r = analytic::run_workload(*hw, w, o);
    return std::pair{r.total_us, r.kernels.size()};
  };
  auto [eager, eager_kernels] = time_of("attention_naive_pytorch.yaml");
  auto [three, three_kernels] = time_of("attention_naive.yaml");
  auto [flash, flash_kernels] = time_of("attention_flash.yaml");
  EXPECT_EQ(eager_kernels, 6u);
  EXPECT_EQ(three_kernels, 3u);
  EXPECT_EQ(flash_kernels, 1u);
  EXPECT_GT(eager / three, 1.2) << eager << " vs " << three << " us";
  EXPECT_GT(three / flash, 1.2) << three << " vs " << flash << " us";
}
