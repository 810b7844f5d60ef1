#include <gtest/gtest.h>

#include "tests/models/mem_test_util.hpp"

namespace gtsim::mem {
namespace {

using ir::OpClass;
using testing::MemFixture;
using testing::warp_access;

TEST(L1Cache, SecondLoadOfALineHitsAtL1Latency) {
  MemFixture f;
  f.mem->begin_kernel(64 * 1024);
  Tick t0 = f.sim.now();
  Tick miss = f.run_one(0, warp_access(OpClass::kLdGlobal, 1 << 20, 4, 4)) - t0;
  Tick t1 = f.sim.now();
  Tick hit = f.run_one(0, warp_access(OpClass::kLdGlobal, 1 << 20, 4, 4)) - t1;
  EXPECT_EQ(hit, 30 * kTicksPerNs);   // l1.latency_cycles at 1 GHz
  EXPECT_GE(miss, (200 + 300) * kTicksPerNs);  // L2 miss: L2 hit latency + HBM latency
  EXPECT_LT(miss, (200 + 300 + 20) * kTicksPerNs);
  auto t = f.mem->totals();
  EXPECT_EQ(t.l1_sector_hits, 4u);
  EXPECT_EQ(t.l1_sector_misses, 4u);
}

TEST(L1Cache, CachedGlobalFalseBypassesL1) {
  MemFixture f;
  f.mem->begin_kernel(64 * 1024);
  auto d = warp_access(OpClass::kLdGlobal, 1 << 20, 4, 4);
  d.cache_global = false;
  f.run_one(0, d);
  Tick t1 = f.sim.now();
  Tick second = f.run_one(0, d) - t1;
  EXPECT_NEAR(double(second) / kTicksPerNs, 200, 6);  // an L2 hit (plus transfer time), not an L1 hit
}

// Reads `bytes` of one SM's address range line by line, twice; returns the second pass's L1 hits.
uint64_t second_pass_hits(MemFixture& f, uint64_t bytes) {
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t a = 0; a < bytes; a += 128) f.run_one(0, warp_access(OpClass::kLdGlobal, a, 4, 4));
  return f.mem->totals().l1_sector_hits;
}

TEST(L1Cache, CapacityFollowsBeginKernelBytes) {
  MemFixture big, small;
  big.mem->begin_kernel(32 * 1024);
  small.mem->begin_kernel(8 * 1024);
  uint64_t footprint = 16 * 1024;
  EXPECT_EQ(second_pass_hits(big, footprint), footprint / 32);  // fits: every sector hits
  EXPECT_LT(second_pass_hits(small, footprint), footprint / 32 / 4);  // LRU over a 2x footprint: thrash
}

TEST(L1Cache, EndKernelInvalidatesL1ButL2KeepsTheLine) {
  MemFixture f;
  f.mem->begin_kernel(64 * 1024);
  auto d = warp_access(OpClass::kLdGlobal, 1 << 20, 4, 4);
  f.run_one(0, d);
  f.mem->end_kernel();
  f.mem->begin_kernel(64 * 1024);
  Tick t1 = f.sim.now();
  EXPECT_NEAR(double(f.run_one(0, d) - t1) / kTicksPerNs, 200, 6);
}

TEST(L1Cache, MissesToALineInFlightMergeIntoOneFetch) {
  MemFixture f;
  f.mem->begin_kernel(64 * 1024);
  auto d = warp_access(OpClass::kLdGlobal, 1 << 20, 4, 4);
  f.mem->issue(0, d, 0, &f.rec, 1);
  f.mem->issue(0, d, 0, &f.rec, 2);
  f.sim.run();
  ASSERT_EQ(f.rec.done.size(), 2u);
  EXPECT_EQ(f.mem->totals().dram_read_bytes, 128u);
  EXPECT_EQ(f.sim.stats().find("mem/l1/mshr_merges")->value_json().get<uint64_t>(), 1u);
}

TEST(L1Cache, StoreIsWrittenThroughAndInvalidatesTheL1Copy) {
  MemFixture f;
  f.mem->begin_kernel(64 * 1024);
  auto ld = warp_access(OpClass::kLdGlobal, 1 << 20, 4, 4);
  f.run_one(0, ld);
  f.run_one(0, warp_access(OpClass::kStGlobal, 1 << 20, 4, 4));
  Tick t1 = f.sim.now();
  EXPECT_NEAR(double(f.run_one(0, ld) - t1) / kTicksPerNs, 200, 6);  // L1 copy gone, L2 has the data
}

TEST(MemorySystem, EveryInstructionCompletesExactlyOnceIncludingEmptyMasks) {
  MemFixture f;
  f.mem->begin_kernel(64 * 1024);
  f.mem->issue(0, warp_access(OpClass::kLdGlobal, 0, 4, 4, 0u), 0, &f.rec, 7);
  f.mem->issue(1, warp_access(OpClass::kAtomGlobal, 0, 4, 4), 0, &f.rec, 8);
  f.mem->issue(1, warp_access(OpClass::kCpAsync, 4096, 16, 16), 0, &f.rec, 9);
  f.sim.run();
  ASSERT_EQ(f.rec.done.size(), 3u);
  EXPECT_EQ(f.rec.done[0].first, 7u);
}

}  // namespace
}  // namespace gtsim::mem
