// Shared-memory bank conflicts (P11): 32 banks of 4 bytes; stride s words serializes gcd(s, 32)
// ways; padding to 33 removes the conflict. The shared pipe serves one wavefront per cycle.
#include <gtest/gtest.h>

#include <random>

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
