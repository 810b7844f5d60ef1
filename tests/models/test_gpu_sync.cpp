// Barriers, mbarriers and cp.async groups: they block and release as on hardware, and a kernel
// that can never finish is diagnosed (which warps wait where, when) instead of hanging.
#include <gtest/gtest.h>

#include "gpu_test_util.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {
namespace {

std::string error_of(const std::string& hw, const std::string& kernel) {
  auto p = testing::inline_kernel(kernel);
  try {
    testing::run_one(hw, *p);
  } catch (const SimulationError& e) {
    return e.what();
  }
  return "";
}

TEST(Barrier, BarSyncUnderDivergenceIsDiagnosedWithWarpAndPlace) {
  std::string msg = error_of("teach-tiny", R"(kernel divbar() {
  grid 1
  block 64
  buffer out : f32[64]
  @(lane < 16) bar.sync
  st.global out[tid.x], x
})");
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("barrier under divergence"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CTA (0,0,0) warp 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bar.sync"), std::string::npos) << msg;
  EXPECT_NE(msg.find("<test>:5"), std::string::npos) << msg;  // file:line of the bar.sync
  EXPECT_NE(msg.find("0xffff of live lanes 0xffffffff"), std::string::npos) << msg;
  EXPECT_NE(msg.find(" ns of simulated time"), std::string::npos) << msg;
}

TEST(Barrier, WarpThatExitsEarlyLeavesOthersWaitingAndIsReportedAsDeadlock) {
  std::string msg = error_of("teach-tiny", R"(kernel early_exit() {
  grid 2
  block 128
  buffer out : f32[256]
  if (warp == 1) {
    return
  }
  bar.sync
  st.global out[ctaid.x * 128 + tid.x], x
})");
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("deadlock in kernel early_exit"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 CTAs have not finished"), std::string::npos) << msg;
  EXPECT_NE(msg.find("warp 0 on SM"), std::string::npos) << msg;
  EXPECT_NE(msg.find("waits at bar.sync 0 (3 of 4 warps arrived, 1 exited)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("<test>:8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at cycle"), std::string::npos) << msg;
}

TEST(Barrier, BarSyncReleasesAllWarpsTogether) {
  auto p = testing::inline_kernel(R"(kernel bar_ok() {
  grid 4
  block 256
  buffer out : f32[1024]
  @(warp == 0) x = ld.global out[tid.x]
  @(warp == 0) x = fadd x, x
  bar.sync
  st.global out[ctaid.x * 256 + tid.x], x
})");
  KernelResult r = testing::run_one("teach-tiny", *p);
  // Seven warps of each CTA wait at the barrier for warp 0's load from DRAM.
  EXPECT_GT(r.stats["gpu"]["sm0"]["stall_barrier"].get<uint64_t>(), 7u * 2u * 100u);
}

// The SM's barrier unit counts one arrival per sm.barrier.cycles_per_warp cycles and releases the
// CTA sm.barrier.latency_cycles after the last: a loop of back-to-back bar.sync costs latency +
// cycles_per_warp x warps per barrier (the H200's: 13 + 2 per warp, lds_burst in b29).
TEST(Barrier, BackToBackBarriersCostLatencyPlusCyclesPerArrivingWarp) {
  const std::string kernel = R"(kernel bars(warps = 4, reps = 8) {
  grid 1
  block warps * 32
  loop r in 0 .. reps runtime unroll 1 {
    loop u in 0 .. 16 unroll 16 {
      bar.sync
    }
  }
})";
  auto per_barrier = [&](int64_t warps, const std::vector<std::string>& set) {
    auto a = testing::inline_kernel(kernel, {{"warps", warps}, {"reps", 8}});
    auto b = testing::inline_kernel(kernel, {{"warps", warps}, {"reps", 16}});
    return double(testing::run_one("h200-sxm", *b, set).cycles - testing::run_one("h200-sxm", *a, set).cycles) / 128;
  };
  const std::vector<std::string> set = {"sm.barrier.latency_cycles=20", "sm.barrier.cycles_per_warp=3"};
  for (int64_t w : {1, 4, 16}) EXPECT_NEAR(per_barrier(w, set), 20 + 3.0 * double(w), 1.0) << w << " warps";
  // without the key: released on the next cycle, each arrival free: only the issue of 4 warps per
  // sub-partition, one a cycle, and the release cycle remain
  const std::vector<std::string> off = {"sm.barrier.latency_cycles=1", "sm.barrier.cycles_per_warp=0"};
  EXPECT_LT(per_barrier(16, off), 6.0);
}

TEST(CpAsync, WaitWithNothingPendingCompletes) {
  auto p = testing::inline_kernel(R"(kernel cp_wait_nothing() {
  grid 4
  block 64
  buffer out : f32[256]
  cp.async.wait 0
  st.global out[ctaid.x * 64 + tid.x], x
})");
  KernelResult r = testing::run_one("teach-tiny", *p);
  EXPECT_EQ(r.ctas, 4u);
  EXPECT_EQ(r.warp_instructions, 4u * 2u * 2u);
}

TEST(CpAsync, WaitGroupBlocksUntilTheDataLands) {
  auto p = testing::inline_kernel(R"(kernel cp_wait() {
  grid 8
  block 128
  buffer src : f32[4096]
  buffer out : f32[1024]
  shared s : f32[512]
  cp.async.16 s[tid.x * 4], src[ctaid.x * 512 + tid.x * 4]
  cp.async.commit
  cp.async.wait 0
  bar.sync
  v = ld.shared s[tid.x]
  st.global out[ctaid.x * 128 + tid.x], v
})");
  KernelResult r = testing::run_one("a100-40gb", *p);
  EXPECT_EQ(r.dram_read_bytes, 4096u * 4u);
  // Each warp waits at least a DRAM round trip (hundreds of cycles) at cp.async.wait.
  uint64_t stall = 0;
  for (int s = 0; s < 8; ++s) stall += r.stats["gpu"]["sm" + std::to_string(s)]["stall_memory"].get<uint64_t>();
  EXPECT_GT(stall, 8u * 4u * 300u);
  EXPECT_GT(r.cycles, 500u);
}

// An L1-allocating cp.async.ca passes its data through the L1 data pipe that shared memory uses:
// read from the line (one wavefront per 128 bytes) and written to shared memory (an 8-byte copy of
// 32 lanes: two half-warp wavefronts), 4 wavefronts per copy (Nsight, validation/data/h200/b7). A
// cp.async.cg is written by the fill path and takes none.
TEST(CpAsync, L1AllocatingCopiesPassTheirDataThroughTheSharedDataPipe) {
  auto wavefronts = [](const std::string& copy) {
    auto p = testing::inline_kernel(R"(kernel cp_pipe() {
  grid 1
  block 256
  buffer src : f32[16384]
  shared s : f32[16384]
  loop i in 0 .. 8 {
    )" + copy + R"(
  }
  cp.async.commit
  cp.async.wait 0
})");
    KernelResult r = testing::run_one("h200-sxm", *p);
    return r.stats["gpu"]["sm0"]["shared_wavefronts"].get<uint64_t>();
  };
  const uint64_t copies = 8 * 8;  // 8 warps x 8 copies
  EXPECT_EQ(wavefronts("cp.async.ca.8 s[(i * 256 + tid.x) * 2], src[(i * 256 + tid.x) * 2]"), 4 * copies);
  EXPECT_EQ(wavefronts("cp.async.cg.16 s[(i * 256 + tid.x) * 4], src[(i * 256 + tid.x) * 4]"), 0u);
}

TEST(MBarrier, ArriveCompletesPhaseAndReleasesWaiters) {
  auto p = testing::inline_kernel(R"(kernel mbar_ok() {
  grid 2
  block 128
  buffer out : f32[256]
  shared mb : u64[1]
  @(tid.x == 0) mbarrier.init mb[0], 128
  bar.sync
  mbarrier.arrive mb[0]
  mbarrier.wait mb[0], 0
  st.global out[ctaid.x * 128 + tid.x], x
})");
  KernelResult r = testing::run_one("teach-tiny", *p);
  EXPECT_EQ(r.ctas, 2u);
}

TEST(MBarrier, PhaseThatNeverCompletesIsReportedAsDeadlock) {
  std::string msg = error_of("teach-tiny", R"(kernel mbar_stuck() {
  grid 1
  block 64
  buffer out : f32[64]
  shared mb : u64[1]
  @(tid.x == 0) mbarrier.init mb[0], 128
  bar.sync
  mbarrier.arrive mb[0]
  mbarrier.wait mb[0], 0
  st.global out[tid.x], x
})");
  EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("waits on the mbarrier"), std::string::npos) << msg;
  EXPECT_NE(msg.find("<test>:9"), std::string::npos) << msg;
}

TEST(CpAsync, PipelinedGemmRunsToCompletion) {
  auto p = testing::lib_kernel("gemm_tiled", {{"M", 512}, {"N", 512}, {"K", 512}});
  KernelResult r = testing::run_one("h200-sxm", *p);
  EXPECT_EQ(r.flops, 2ull * 512 * 512 * 512 + 512ull * 512);  // mma, and the epilogue's alpha scaling
  EXPECT_GT(r.cycles, 0u);
}

}  // namespace
}  // namespace gtsim::gpu
