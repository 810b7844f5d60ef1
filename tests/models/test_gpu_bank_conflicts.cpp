// Shared-memory bank conflicts (P11): 32 banks of 4 bytes; stride s words serializes gcd(s, 32)
// ways; padding to 33 removes the conflict. The shared pipe serves one wavefront per cycle.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.hpp"
#include "kernels_ir/trace.hpp"
#include "models/gpu/shared_banks.hpp"

namespace gtsim::gpu {
namespace {

struct BankRun {
  double wavefronts_per_load;
  double conflicts_per_load;
  uint64_t pipe_busy;  // cycles the shared pipes served the loads (the fill stores taken out)
  uint64_t cycles;
};

BankRun run_stride(int stride) {
  auto p = testing::lib_kernel("bank_conflicts", {{"stride", stride}, {"iters", 64}});
  KernelResult r = testing::run_one("h200-sxm", *p);
  double loads = r.metrics["smsp__sass_inst_executed_op_shared_ld.sum"].get<double>();
  double stores = r.metrics["smsp__sass_inst_executed_op_shared_st.sum"].get<double>();
  double wf = r.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"].get<double>();
  double conflicts = r.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"].get<double>();
  uint64_t busy = 0;
  for (int s = 0; s < 132; ++s) busy += r.stats["gpu"]["sm" + std::to_string(s)]["shared_pipe_busy"].get<uint64_t>();
  // The initial fill stores are conflict-free (consecutive words): one wavefront each.
  return {(wf - stores) / loads, conflicts / loads, busy - uint64_t(stores), r.cycles};
}

TEST(SharedBanks, StrideSerializesThatManyWays) {
  BankRun base = run_stride(1);
  EXPECT_DOUBLE_EQ(base.wavefronts_per_load, 1.0);
  for (int stride : {2, 4, 8, 16, 32}) {
    BankRun r = run_stride(stride);
    EXPECT_DOUBLE_EQ(r.wavefronts_per_load, double(stride)) << stride;
    EXPECT_DOUBLE_EQ(r.conflicts_per_load, double(stride - 1)) << stride;
    // The shared pipe's busy time scales the same way.
    EXPECT_DOUBLE_EQ(double(r.pipe_busy) / double(base.pipe_busy), double(stride)) << stride;
  }
}

TEST(SharedBanks, PaddingToOddStrideRemovesConflicts) {
  BankRun r = run_stride(33);
  EXPECT_DOUBLE_EQ(r.wavefronts_per_load, 1.0);
  EXPECT_DOUBLE_EQ(r.conflicts_per_load, 0.0);
}

TEST(SharedBanks, ConflictedKernelRunsSlowerByTheWavefronts) {
  BankRun s1 = run_stride(1), s32 = run_stride(32);
  EXPECT_GT(double(s32.cycles) / double(s1.cycles), 10.0);
}

// The model's counter agrees with the IR's trace tool (kernels_ir/trace.hpp) on random patterns.
TEST(SharedBanks, WavefrontsAgreeWithIrTrace) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    ir::DynInst d;
    d.op = ir::OpClass::kLdShared;
    d.access_bytes = uint8_t(4 << (trial % 3));  // 4, 8, 16 bytes
    d.active = d.addr_active = uint32_t(rng()) | 1u;
    for (int l = 0; l < 32; ++l) d.addr[l] = (rng() % 512) * d.access_bytes;
    EXPECT_EQ(shared_wavefronts(d, 32, 4).wavefronts, ir::shared_wavefronts(d)) << trial;
  }
}

// A wavefront returns at most 128 bytes of lane data (one register for 32 lanes), so a 16-byte
// request is served by quarter-warps and bank conflicts count within each quarter. The pattern is
// gemm_fp32's B fragment load (lane l reads 16 bytes at (l % 16) x 32): whole-warp, each bank holds 4
// distinct words (4 wavefronts); by quarter-warps, lanes 0 and 4 of a quarter collide (2 per
// quarter, 8 in all). The hardware's count for that kernel (validation/data/h200/b3/ncu_apps.csv)
// matches the quarter-warp rule.
TEST(SharedBanks, SixteenByteLoadsAreServedByQuarterWarps) {
  ir::DynInst d;
  d.op = ir::OpClass::kLdShared;
  d.access_bytes = 16;
  d.active = d.addr_active = ir::kFullMask;
  for (int l = 0; l < 32; ++l) d.addr[l] = uint64_t(l % 16) * 32;
  SharedCost c = shared_wavefronts(d, 32, 4);
  EXPECT_EQ(c.wavefronts, 8u);
  EXPECT_EQ(c.ideal, 4u);
  // 8-byte accesses: half-warps; 64 consecutive words are 2 conflict-free wavefronts.
  d.access_bytes = 8;
  for (int l = 0; l < 32; ++l) d.addr[l] = uint64_t(l) * 8;
  EXPECT_EQ(shared_wavefronts(d, 32, 4).wavefronts, 2u);
}

// Lane pairs that read one address return packed: a 16-byte load whose lanes 2i and 2i + 1 (or
// lanes l and l ^ 2) agree is served by half-warps. gemm_fp32's A fragment load (two addresses,
// lanes 0-15 and 16-31) takes 2 wavefronts, as the hardware counts; a store does not pack.
TEST(SharedBanks, PairUniformLoadsPackTwoLanesPerReturn) {
  ir::DynInst d;
  d.op = ir::OpClass::kLdShared;
  d.access_bytes = 16;
  d.active = d.addr_active = ir::kFullMask;
  for (int l = 0; l < 32; ++l) d.addr[l] = uint64_t(l / 16) * 32;
  EXPECT_EQ(shared_wavefronts(d, 32, 4).wavefronts, 2u);
  for (int l = 0; l < 32; ++l) d.addr[l] = uint64_t(l / 2) * 16;  // pairs agree: 16 distinct chunks
  EXPECT_EQ(shared_wavefronts(d, 32, 4).wavefronts, 2u);
  d.op = ir::OpClass::kStShared;
  EXPECT_EQ(shared_wavefronts(d, 32, 4).wavefronts, 4u);
  // ldmatrix is not split: a conflict-free .x4 is 4 wavefronts (512 bytes).
  d.op = ir::OpClass::kLdMatrix;
  for (int l = 0; l < 32; ++l) d.addr[l] = uint64_t(l) * 16;
  EXPECT_EQ(shared_wavefronts(d, 32, 4).wavefronts, 4u);
}

TEST(SharedBanks, BroadcastAndVectorAccesses) {
  ir::DynInst d;
  d.access_bytes = 4;
  d.active = d.addr_active = ir::kFullMask;
  for (int l = 0; l < 32; ++l) d.addr[l] = 64;  // all lanes read one word: broadcast
  EXPECT_EQ(shared_wavefronts(d, 32, 4).wavefronts, 1u);
  d.access_bytes = 16;  // 32 lanes x 16 consecutive bytes = 4 wavefronts, conflict-free
  for (int l = 0; l < 32; ++l) d.addr[l] = uint64_t(l) * 16;
  SharedCost c = shared_wavefronts(d, 32, 4);
  EXPECT_EQ(c.wavefronts, 4u);
  EXPECT_EQ(c.ideal, 4u);
}

}  // namespace
}  // namespace gtsim::gpu

namespace gtsim::gpu {
namespace {

// The MIO queue: a warp hands its shared loads to the sub-partition's queue and goes on issuing
// independent FFMAs while the shared pipe serves them. Four 32-way conflicted loads (32 wavefronts
// each) and 256 independent FFMAs: with no queue the warp waits at each load for the pipe (the
// FFMAs start after about 3 x 32 cycles); with a queue of 4 the loads issue one LSU interval apart
// (4 cycles) and the FFMAs overlap the loads' 128 wavefronts.
TEST(SharedBanks, QueuedSharedLoadsLetTheWarpIssueIndependentWork) {
  auto p = testing::inline_kernel(
      "kernel k() {\n grid 1 block 32\n shared s : f32[32 * 32]\n reg a[4]\n reg f[8]\n"
      " loop i in 0 .. 4 unroll 4 {\n  a[i] = ld.shared s[lane * 32 + i]\n }\n"
      " loop j in 0 .. 32 unroll 32 {\n  loop k in 0 .. 8 unroll 8 {\n   f[k] = ffma f[k], f[k], f[k]\n  }\n }\n"
      " o = fadd a[0], a[3]\n}\n");
  // in issue order (one wavefront a cycle) and as the H200's config serves them (sub_partition, one
  // warp's wavefronts two cycles apart: each load's 32 wavefronts take 64 cycles)
  for (auto [order, gap] : {std::pair<const char*, int>{"fifo", 1}, {"sub_partition", 2}}) {
    const std::vector<std::string> sets = {std::string("sm.shared.arbitration=") + order,
                                           "sm.shared.warp_cycles_per_wavefront=" + std::to_string(gap)};
    auto with = [&](const char* depth) {
      auto s = sets;
      s.push_back(std::string("sm.shared.mio_queue_depth=") + depth);
      return testing::run_one("h200-sxm", *p, s);
    };
    KernelResult none = with("0"), queued = with("4");
    EXPECT_EQ(none.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"], 128);
    EXPECT_EQ(queued.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"], 128);
    // The three waits at the pipe (3 x 32 x gap cycles, less the LSU's 3 x 4) overlap the FFMAs once queued.
    const double waits = 3.0 * 32 * gap;
    EXPECT_GT(double(none.cycles) - double(queued.cycles), 0.75 * waits)
        << order << ": " << none.cycles << " vs " << queued.cycles;
    EXPECT_LT(double(none.cycles) - double(queued.cycles), 1.1 * waits)
        << order << ": " << none.cycles << " vs " << queued.cycles;
  }
}

}  // namespace
}  // namespace gtsim::gpu
