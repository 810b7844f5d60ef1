// GpuModel as a whole: config refusal, variants by name, multi-kernel runs, the JSON contract,
// tensor-core rates, determinism.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "gpu_test_util.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

TEST(GpuConfig, MisspeltSmKeyIsAnErrorWithItsLine) {
  std::string yaml = read_text(testing::source_path("hw_configs/a100-40gb.yaml"));
  yaml = replace_once(yaml, "  issue_per_cycle: 1", "  issue_per_cycle: 1\n  isue_per_cycle: 2");
  auto root = ConfigNode::load_string(yaml, "a100-typo.yaml");
  try {
    GpuModel m(*root);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("a100-typo.yaml:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sm.isue_per_cycle"), std::string::npos) << msg;
  }
}

TEST(GpuConfig, UnknownWarpSchedulerListsTheRegisteredOnes) {
  try {
    testing::run_one("a100-40gb", *testing::lib_kernel("empty"), {"sm.warp_scheduler=fifo"});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("gto"), std::string::npos) << msg;
    EXPECT_NE(msg.find("lrr"), std::string::npos) << msg;
  }
}

TEST(GpuConfig, LooseRoundRobinSchedulerRuns) {
  // work = 256: the FFMA chains outweigh the stores at the end (with work = 32 the stores of all
  // warps finishing together under lrr queue at the L2 slices for an eighth of the kernel)
  // Exact runs: the scheduler must not change what is executed, and a sampled run's instruction
  // count is extrapolated (to within rounding), so only exact ones can be held equal.
  auto p = testing::lib_kernel("fixed_work", {{"ctas", 132}, {"work", 256}});
  auto exact = [&](const std::vector<std::string>& sets) {
    auto root = testing::load_hw("h200-sxm", sets);
    GpuModel m(*root);
    SamplingPolicy pol;
    pol.exact = true;
    m.set_sampling(pol);
    return m.run(*p);
  };
  KernelResult gto = exact({});
  KernelResult lrr = exact({"sm.warp_scheduler=lrr"});
  EXPECT_EQ(lrr.warp_instructions, gto.warp_instructions);
  // Both saturate issue: same time within a few percent.
  EXPECT_NEAR(double(lrr.cycles) / double(gto.cycles), 1.0, 0.1);
}

TEST(GpuModel, JsonHasTheReportedKeys) {
  KernelResult r = testing::run_one("a100-40gb", *testing::lib_kernel("empty"));
  nlohmann::json j = r.to_json();
  for (const char* k : {"kernel", "hw", "cycles", "time_us", "ctas", "waves", "warp_instructions", "dram_read_bytes",
                        "dram_write_bytes", "l2_hit_rate", "flops", "sim_wall_seconds", "events", "metrics",
                        "ctas_per_sm", "occupancy_limiter", "launch_overhead_us", "stats"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["kernel"], "empty");
  EXPECT_EQ(j["hw"], "NVIDIA A100-SXM4-40GB");
  // time = launch overhead + execution on the SM clock
  EXPECT_NEAR(r.time_us, 3.5 + double(r.cycles) / 1410.0, 1e-9);
  EXPECT_TRUE(j["metrics"].contains("gpu__time_duration.sum"));
  EXPECT_TRUE(j["metrics"].contains("sm__warps_active.avg.pct_of_peak_sustained_active"));
  EXPECT_TRUE(j["metrics"].contains("dram__bytes_read.sum"));
}

TEST(GpuModel, SecondKernelReportsItsOwnCountsAndFindsDataInL2) {
  auto root = testing::load_hw("h200-sxm");
  GpuModel model(*root);
  auto p = testing::lib_kernel("stream_copy", {{"n", 1 << 20}});
  KernelResult first = model.run(*p);
  model.idle(2.0);
  KernelResult second = model.run(*p);
  EXPECT_EQ(second.warp_instructions, first.warp_instructions);  // per-kernel differences
  EXPECT_EQ(first.dram_read_bytes, 4u << 20);
  EXPECT_LT(second.dram_read_bytes, first.dram_read_bytes / 4);  // 8 MB of data stays in the 50 MB L2
  EXPECT_GT(second.l2_hit_rate, 0.9);
  // Not slower. The H200 runs the L2-resident copy in 1.97 us against 3.38 us cold (b2 stream_copy at
  // n = 2^20); the model's cold copy of this size misses the HBM's ramp (both runs are bound by the L2
  // slices here, within a few cycles of each other), so it asserts no more than that.
  EXPECT_LE(double(second.cycles), 1.01 * double(first.cycles));
}

TEST(TensorCore, MmaSyncReachesTheConfiguredRate) {
  // The configured bf16 mma.sync rate per SM per cycle (calibrated on the H200); 1056 CTAs of 4
  // warps fill 132 SMs exactly, and 4 independent accumulators per warp keep the pipe busy.
  auto root = testing::load_hw("h200-sxm");
  const double rate = root->at("sm").at("tensor").at("mma_sync_flops_per_cycle").param<double>("bf16").get();
  // The steady rate: the slope between 64 and 128 iterations (the results' stores, half-written
  // sectors, are a fixed cost that short runs do not yet hide).
  auto slope = [](int64_t dtype) {
    KernelResult a =
        testing::run_one("h200-sxm", *testing::lib_kernel("mma_throughput", {{"dtype", dtype}, {"iters", 64}}));
    KernelResult b =
        testing::run_one("h200-sxm", *testing::lib_kernel("mma_throughput", {{"dtype", dtype}, {"iters", 128}}));
    return double(b.flops - a.flops) / double(b.cycles - a.cycles) / 132.0;
  };
  const double per_sm_cycle = slope(1);
  EXPECT_GT(per_sm_cycle, 0.85 * rate);
  EXPECT_LE(per_sm_cycle, rate);
  // tf32 runs at half the rate: about twice the time for half the flops per instruction.
  EXPECT_NEAR(slope(2) / per_sm_cycle, 0.5, 0.06);
}

TEST(SmClock, KernelThatIssuesTensorCoreInstructionsRunsAtTheTensorClock) {
  // Hopper holds a lower SM clock under tensor-core load (clocks.sm_mhz_tensor, Nsight Compute's
  // cycles over time of mma_throughput): a kernel runs at it when it may issue mma.sync; an mma in a
  // branch its parameters rule out does not count. One machine: the clock changes between kernels.
  auto root = testing::load_hw("h200-sxm");
  const double mhz = root->at("clocks").param<double>("sm_mhz").get();
  const double tensor_mhz = root->at("clocks").param<double>("sm_mhz_tensor").get();
  ASSERT_LT(tensor_mhz, mhz);
  GpuModel model(*root);
  auto mma = testing::lib_kernel("mma_shared", {{"variant", 1}, {"iters", 8}, {"SMS", 4}});
  auto loads = testing::lib_kernel("mma_shared", {{"variant", 0}, {"iters", 8}, {"SMS", 4}});
  EXPECT_TRUE(mma->uses_tensor_cores());
  EXPECT_FALSE(loads->uses_tensor_cores());
  KernelResult a = model.run(*mma);
  KernelResult b = model.run(*loads);
  KernelResult c = model.run(*mma);
  EXPECT_DOUBLE_EQ(a.sm_mhz, tensor_mhz);
  EXPECT_DOUBLE_EQ(b.sm_mhz, mhz);
  EXPECT_DOUBLE_EQ(c.sm_mhz, tensor_mhz);
  EXPECT_NEAR(a.time_us - a.launch_overhead_us, double(a.cycles) / tensor_mhz, 1e-9);
  EXPECT_NEAR(b.time_us - b.launch_overhead_us, double(b.cycles) / mhz, 1e-9);
  EXPECT_NEAR(double(c.cycles), double(a.cycles), 0.01 * double(a.cycles));  // same work, same cycles
}

// Cost per k-tile (cycles) of a mma_shared variant on 4 SMs: the slope between two iteration counts.
double mma_shared_cycles_per_ktile(int variant, const std::vector<std::string>& sets) {
  std::vector<std::string> s = sets;
  s.push_back("sm.count=4");
  auto run = [&](int64_t iters) {
    auto p = testing::lib_kernel("mma_shared", {{"variant", variant}, {"iters", iters}, {"SMS", 4}});
    return double(testing::run_one("h200-sxm", *p, s).cycles);
  };
  return (run(24) - run(8)) / 16.0 / 2.0;  // two CTAs per SM
}

TEST(TensorCore, LdmatrixWritebackHoldsTheSubPartitionsTensorPipe) {
  // Each ldmatrix.x4 writes 4 registers per lane back through the path its sub-partition's tensor
  // core needs: 12 per warp and k-tile, 2 warps per sub-partition and CTA, so with q cycles per
  // register the k-tile of "both" grows by up to 2 x 12 x 4q cycles per CTA (less where the
  // writeback lands in cycles the tensor core would idle anyway: the address chains, the loop).
  // The loads alone and the mma alone do not change.
  const std::string key = "sm.tensor.ldmatrix_writeback_cycles_per_reg=";
  double both0 = mma_shared_cycles_per_ktile(2, {key + "0"});
  double both1 = mma_shared_cycles_per_ktile(2, {key + "1"});
  double mma0 = mma_shared_cycles_per_ktile(1, {key + "0"});
  double mma1 = mma_shared_cycles_per_ktile(1, {key + "1"});
  double ld0 = mma_shared_cycles_per_ktile(0, {key + "0"});
  double ld1 = mma_shared_cycles_per_ktile(0, {key + "1"});
  const double full = 2 * 12 * 4;
  EXPECT_GT(both1 - both0, 0.4 * full);
  EXPECT_LT(both1 - both0, 1.05 * full);
  EXPECT_NEAR(mma1, mma0, 0.01 * mma0);
  EXPECT_NEAR(ld1, ld0, 0.01 * ld0);
  // without the writeback most of the loads hide under the mma
  EXPECT_LT(both0, mma0 + 0.5 * ld0);
}

TEST(TensorCore, DtypeWithoutARateIsAnError) {
  // an e4m3 mma.sync: the A100 (sm_80) has no fp8 tensor cores and its config no e4m3 rate
  auto p = testing::lib_kernel("gemm_tiled", {{"M", 128}, {"N", 128}, {"K", 64}, {"DT", 3}});
  EXPECT_THROW(testing::run_one("a100-40gb", *p), SimulationError);
}

std::string json_without_wall(const KernelResult& r) {
  nlohmann::json j = r.to_json();
  j.erase("sim_wall_seconds");
  return j.dump();
}

TEST(Determinism, TwoRunsGiveByteIdenticalJson) {
  auto p = testing::lib_kernel("stream_copy", {{"n", 1 << 18}});
  std::string a = json_without_wall(testing::run_one("a100-40gb", *p));
  std::string b = json_without_wall(testing::run_one("a100-40gb", *p));
  EXPECT_EQ(a, b);
}

TEST(Determinism, SimulationsOnTwoThreadsEqualEachAlone) {
  auto p = testing::lib_kernel("divergence", {{"ways", 4}, {"work", 16}});
  auto q = testing::lib_kernel("stream_copy", {{"n", 1 << 18}});
  std::string alone_p = json_without_wall(testing::run_one("h200-sxm", *p));
  std::string alone_q = json_without_wall(testing::run_one("a100-40gb", *q));
  std::string par_p, par_q;
  std::thread t1([&] { par_p = json_without_wall(testing::run_one("h200-sxm", *p)); });
  std::thread t2([&] { par_q = json_without_wall(testing::run_one("a100-40gb", *q)); });
  t1.join();
  t2.join();
  EXPECT_EQ(par_p, alone_p);
  EXPECT_EQ(par_q, alone_q);
}

// Cycles per warp instruction of one sub-partition: 4 warps per sub-partition, each 8 independent
// chains of `body` (an integer instruction), on one H200 SM.
double int_cycles_per_inst(const std::string& body, const std::vector<std::string>& sets = {}) {
  auto run = [&](int64_t n) {
    auto p = testing::inline_kernel(R"(kernel ints(n) {
  grid 1
  block 512
  buffer out : f32[512]
  reg r[8]
  loop i in 0 .. n unroll 64 {
    )" + body + R"(
  }
  st.global out[tid.x], r[0]
})",
                                    {{"n", n}});
    std::vector<std::string> s = sets;
    s.push_back("sm.count=1");
    return double(testing::run_one("h200-sxm", *p, s).cycles);
  };
  return (run(4096) - run(1024)) / 3072.0 / 4.0;  // 4 warps per sub-partition
}

TEST(IntegerPipe, OnlyMultiplyAddsAlsoIssueOnTheFmaPipe) {
  // Hopper's INT pipe has 16 lanes per sub-partition (2 cycles per warp instruction); IMAD and IMUL
  // also run on the 32-lane FMA datapath [NCU-pipes], so a stream of them issues every cycle, while
  // IADD3 / LOP3 / SHF stay at the INT pipe's rate.
  double mad = int_cycles_per_inst("r[i % 8] = iexpr r[i % 8] * 3 + i");
  double add = int_cycles_per_inst("r[i % 8] = iexpr r[i % 8] - r[i % 8] + i");
  double imad = int_cycles_per_inst("r[i % 8] = imad r[i % 8], 3, i");
  double iadd = int_cycles_per_inst("r[i % 8] = iadd r[i % 8], i");
  double shl = int_cycles_per_inst("r[i % 8] = shl r[i % 8], 1");
  EXPECT_NEAR(add, 2.0, 0.15);
  EXPECT_NEAR(iadd, 2.0, 0.15);
  EXPECT_NEAR(shl, 2.0, 0.15);
  EXPECT_NEAR(mad, 1.0, 0.1);
  EXPECT_NEAR(imad, 1.0, 0.1);
  // without the FMA datapath (sm.int_on_fma = false) multiply-adds take the INT pipe's rate too
  EXPECT_NEAR(int_cycles_per_inst("r[i % 8] = iexpr r[i % 8] * 3 + i", {"sm.int_on_fma=false"}), 2.0, 0.15);
}

}  // namespace
}  // namespace gtsim::gpu
