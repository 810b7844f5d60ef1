// Hopper's asynchronous machinery: the tensor memory accelerator's bulk tensor copies (completing on an
// mbarrier, bound by TMA's 16-byte rules), wgmma's commit / wait groups, and the warp-specialized
// persistent GEMM built from them (kernels_ir/lib/gemm_wgmma.kir), against the mma.sync kernels.
#include <gtest/gtest.h>

#include "gpu_test_util.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {
namespace {

std::string hopper_error_of(const std::string& kernel) {
  auto p = testing::inline_kernel(kernel);
  try {
    testing::run_one("h200-sxm", *p);
  } catch (const SimulationError& e) {
    return e.what();
  }
  return "";
}

// One CTA copies a 64 x 64 bf16 box with one bulk copy, waits on its mbarrier and stores a value.
std::string tma_kernel(const std::string& ld, const std::string& init = "1") {
  return R"(kernel tma_one() {
  grid 1
  block 128
  buffer A : bf16[64 * 4096] align 128
  buffer out : f32[128]
  shared As : bf16[4096]
  shared full : u64[1]
  if (tid.x == 0) {
    mbarrier.init full[0], )" +
         init + R"(
  }
  bar.sync
  @(warp == 0 && lane == 0) cp.async.bulk.tensor full[0], A[0], 64, 64, )" +
         ld + R"(
  mbarrier.wait full[0], 0
  st.global out[tid.x], x
})";
}

TEST(Tma, ABulkCopyCompletesItsMbarrierOnceEveryLineHasLanded) {
  auto p = testing::inline_kernel(tma_kernel("4096"));
  KernelResult r = testing::run_one("h200-sxm", *p);
  // 64 rows of 128 bytes, one line each, read from DRAM (a fresh machine), and the waiters released
  // only after: the kernel lasts at least one DRAM round trip.
  EXPECT_EQ(r.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"].get<uint64_t>(), 64u);
  EXPECT_GE(r.dram_read_bytes, 64u * 128u);
  EXPECT_GT(r.time_us - r.launch_overhead_us, 0.4);  // HBM latency is several hundred ns
}

TEST(Tma, ABulkCopyIsOneInstructionOfOneWarp) {
  auto p = testing::inline_kernel(tma_kernel("4096"));
  KernelResult r = testing::run_one("h200-sxm", *p);
  // an LSU copy of 8 KB by 128 threads would be 4 cp.async per thread (16 warp instructions)
  EXPECT_LT(r.warp_instructions, 40u);
}

TEST(Tma, ARowStrideThatIsNotAMultipleOf16BytesIsRejected) {
  std::string msg = hopper_error_of(tma_kernel("4095"));
  EXPECT_NE(msg.find("not a multiple of 16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cp.async.bulk.tensor"), std::string::npos) << msg;
}

TEST(Tma, ABoxWiderThan256ElementsIsRejected) {
  std::string k = tma_kernel("4096");
  k.replace(k.find("A[0], 64, 64"), 12, "A[0], 64, 512");
  std::string msg = hopper_error_of(k);
  EXPECT_NE(msg.find("expected 1..256 rows of 1..256 elements"), std::string::npos) << msg;
}

TEST(Tma, AnMbarrierWaitingForTwoCopiesThatGetsOneIsADeadlock) {
  std::string msg = hopper_error_of(tma_kernel("4096", "2"));
  EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("waits on the mbarrier"), std::string::npos) << msg;
}

// Four wgmma m64n256k16 per warp, then wait_group 0, then a load from DRAM and a store of it: the load
// issues only once the group's tensor-core work (4 x 2*64*256*16 / 4 flops per warp at the
// sub-partition's rate: 4 x 128 cycles) is done. Without the wait the load overlaps that work.
uint64_t wgmma_cycles(bool wait, int n_wgmma = 4) {
  std::string k = R"(kernel wg() {
  grid 1
  block 128
  buffer in : f32[128]
  buffer out : f32[128]
  reg acc[4]
  loop i in 0 .. )" +
                  std::to_string(n_wgmma) + R"( {
    acc[i] = wgmma.m64n256k16.bf16.f32 da, db, acc[i]
  }
  wgmma.commit
)" + std::string(wait ? "  wgmma.wait 0\n" : "") +
                  R"(  v = ld.global in[tid.x]
  st.global out[tid.x], v
})";
  auto p = testing::inline_kernel(k);
  return testing::run_one("h200-sxm", *p).cycles;
}

TEST(Wgmma, WaitGroupHoldsTheWarpUntilItsGroupsTensorCoreWorkIsDone) {
  const uint64_t with = wgmma_cycles(true), without = wgmma_cycles(false), memory = wgmma_cycles(false, 0);
  // h200-sxm: 4096 bf16 flops per cycle per SM, 1024 per sub-partition: 131072 / 1024 = 128 cycles each.
  // With the wait the load follows all four; without it, it follows the issue of the fourth (the warp
  // issues each wgmma when the tensor core takes it), 128 cycles earlier.
  EXPECT_GE(with + 8, memory + 4 * 128) << "with " << with << ", the load alone " << memory;
  EXPECT_LE(without, memory + 3 * 128 + 32) << "without " << without << ", the load alone " << memory;
}

TEST(Wgmma, AWarpgroupsFourWarpsShareOneWgmmasFlops) {
  auto p = testing::inline_kernel(R"(kernel wg1() {
  grid 1
  block 128
  reg acc[1]
  acc[0] = wgmma.m64n256k16.bf16.f32 da, db, acc[0]
})");
  EXPECT_EQ(testing::run_one("h200-sxm", *p).flops, 2ull * 64 * 256 * 16);
}

KernelResult wgmma_gemm(int64_t n, int64_t cluster) {
  auto p = testing::lib_kernel("gemm_wgmma", {{"M", n}, {"N", n}, {"K", n}, {"CLUSTER", cluster}});
  return testing::run_one("h100-sxm", *p);
}

TEST(WgmmaGemm, TmaMulticastAcrossAClusterHalvesTheL2ReadsOfTheSharedOperand) {
  const KernelResult one = wgmma_gemm(1024, 1), two = wgmma_gemm(1024, 2);
  const auto l2_reads = [](const KernelResult& r) {
    return double(r.metrics["lts__t_sectors_srcunit_tex_op_read.sum"].get<uint64_t>());
  };
  // per k-tile: A 128 x 64 and B 64 x 256 bf16 (16 + 32 KB); a cluster of two loads B once: 16 + 16 KB
  EXPECT_NEAR(l2_reads(two) / l2_reads(one), 32.0 / 48.0, 0.03);
  EXPECT_EQ(one.flops, two.flops);
}

TEST(WgmmaGemm, AWarpSpecializedWgmmaGemmOutrunsTheMmaSyncKernelOnHopper) {
  const KernelResult wg = wgmma_gemm(1024, 2);
  auto p = testing::lib_kernel("gemm_persistent", {{"M", 1024}, {"N", 1024}, {"K", 1024}});
  const KernelResult mma = testing::run_one("h100-sxm", *p);
  EXPECT_LT(wg.cycles * 1.3, double(mma.cycles)) << "wgmma " << wg.cycles << " mma.sync " << mma.cycles;
}

// fp8 (e4m3) wgmma does twice bf16's flops per cycle (wgmma_flops_per_cycle) on half the bytes per
// element: the same GEMM and tiles move half the operand bytes through the L2 and, compute-bound,
// take well under three quarters of the bf16 kernel's cycles.
TEST(WgmmaGemm, AnFp8GemmMovesHalfTheBytesAtTwiceTheTensorRate) {
  auto run = [](int64_t dt) {
    auto p = testing::lib_kernel("gemm_wgmma", {{"M", 2048}, {"N", 2048}, {"K", 2048}, {"DT", dt}, {"CLUSTER", 2}});
    return testing::run_one("h100-sxm", *p);
  };
  const KernelResult bf16 = run(1), fp8 = run(3);
  const auto l2_reads = [](const KernelResult& r) {
    return double(r.metrics["lts__t_sectors_srcunit_tex_op_read.sum"].get<uint64_t>());
  };
  EXPECT_NEAR(l2_reads(fp8) / l2_reads(bf16), 0.5, 0.03);
  EXPECT_EQ(fp8.flops, bf16.flops);
  EXPECT_LT(double(fp8.cycles), 0.75 * double(bf16.cycles)) << fp8.cycles << " vs " << bf16.cycles;
}

// The producer warp and the consumer warpgroups share one k-loop (each warp its own branch), so the
// sampler fast-forwards a warp-specialized GEMM as it does the mma.sync ones, in skips of a whole number
// of the pipeline's 2 x STAGES iterations (every mbarrier back at its stage and phase parity); skipped
// work must leave the time and the DRAM bytes within 2% of the exact run. (Known: on a 16-SM variant
// of the config, 1024^2 x 16384, the sampled time is 2.1% above exact while the estimate says 0.1%.)
TEST(WgmmaGemm, SamplingTheWarpSpecializedPipelineStaysWithinTwoPercentOfExact) {
  auto p = testing::lib_kernel("gemm_wgmma", {{"M", 2048}, {"N", 2048}, {"K", 16384}, {"CLUSTER", 2}, {"GRID", 132}});
  auto run = [&](bool exact) {
    auto root = testing::load_hw("h100-sxm");
    GpuModel model(*root);
    SamplingPolicy sp;
    sp.exact = exact;
    model.set_sampling(sp);
    return model.run(*p);
  };
  const KernelResult sampled = run(false), exact = run(true);
  EXPECT_LT(sampled.sampling.fraction_simulated, 0.9);  // the sampler engaged
  EXPECT_NEAR(double(sampled.cycles) / double(exact.cycles), 1.0, 0.02);
  EXPECT_NEAR(double(sampled.dram_read_bytes + sampled.dram_write_bytes) /
                  double(exact.dram_read_bytes + exact.dram_write_bytes),
              1.0, 0.02);
}

}  // namespace
}  // namespace gtsim::gpu
