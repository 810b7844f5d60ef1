// The shared pipe's arbitration (sm.shared.arbitration): in issue order (fifo), one wavefront a cycle
// round-robin over the waiting requests (round_robin) or over the sub-partitions' queues
// (sub_partition), one warp's wavefronts at most one per sm.shared.warp_cycles_per_wavefront cycles;
// a shared instruction's LSU interval held by its sub-partition or by its warp (sm.shared.mio_issue).
// validation/data/h200/experiments/b29_lds_burst and b33_lds_steady have the H200's side.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "gpu_test_util.hpp"
#include "models/gpu/shared_pipe.hpp"

namespace gtsim::gpu {
namespace {

SharedPipe::Request req(uint16_t warp, uint32_t wavefronts, uint8_t sp = 0) {
  SharedPipe::Request r;
  r.warp = warp;
  r.sp = sp;
  r.wavefronts = wavefronts;
  r.n_dst = 1;
  return r;
}

// Serves everything queued; the cycle of each warp's last wavefront.
std::map<uint16_t, uint64_t> drain(SharedPipe& pipe) {
  std::map<uint16_t, uint64_t> last;
  pipe.advance(1 << 20, [&](const SharedPipe::Request& r, uint64_t c) { last[r.warp] = c; });
  return last;
}

TEST(SharedPipe, RequestsThatArriveTogetherShareThePipeAndFinishTogether) {
  SharedPipe pipe;
  pipe.reset(8, 4, 1);
  for (uint16_t w = 0; w < 4; ++w) pipe.enqueue(req(w, 8), 0);
  auto last = drain(pipe);
  // 32 wavefronts in 32 cycles, one of each request in turn: all four finish in the last four cycles
  // (in issue order they would finish at 7, 15, 23, 31)
  for (uint16_t w = 0; w < 4; ++w) EXPECT_EQ(last[w], 28u + w) << "warp " << w;
}

TEST(SharedPipe, OneWarpAloneIsServedOneWavefrontPerItsGap) {
  SharedPipe pipe;
  pipe.reset(8, 4, 2);
  pipe.enqueue(req(0, 2), 0);
  pipe.enqueue(req(0, 8), 0);
  pipe.enqueue(req(0, 2), 0);
  pipe.enqueue(req(0, 8), 0);
  auto last = drain(pipe);
  EXPECT_EQ(last[0], 38u);  // 20 wavefronts, two cycles apart: the last enters at cycle 38
  // two warps fill each other's gaps: 40 wavefronts in 40 cycles
  pipe.reset(8, 4, 2);
  for (uint16_t w = 0; w < 2; ++w)
    for (uint32_t wf : {2u, 8u, 2u, 8u}) pipe.enqueue(req(w, wf), 0);
  last = drain(pipe);
  EXPECT_EQ(std::max(last[0], last[1]), 39u);
}

TEST(SharedPipe, MioQueueCountsRequestsUntilTheirFirstWavefront) {
  SharedPipe pipe;
  pipe.reset(8, 4, 1);
  pipe.enqueue(req(0, 4, 1), 0);
  pipe.enqueue(req(1, 4, 1), 0);
  EXPECT_EQ(pipe.waiting(1), 2u);
  EXPECT_EQ(pipe.next_event(true), 0u);  // the first starts at once
  pipe.advance(1, [](const SharedPipe::Request&, uint64_t) {});
  EXPECT_EQ(pipe.waiting(1), 1u);
  pipe.advance(2, [](const SharedPipe::Request&, uint64_t) {});
  EXPECT_EQ(pipe.waiting(1), 0u);
}

TEST(SharedPipe, SubPartitionsTakeTurnsAndEachServesItsOwnRequestsInOrder) {
  SharedPipe pipe;
  pipe.reset(8, 4, 1, SharedPipe::Order::kSubPartitions);
  pipe.enqueue(req(0, 8, 0), 0);  // sub-partition 0: warp 0, then warp 4
  pipe.enqueue(req(4, 8, 0), 0);
  pipe.enqueue(req(1, 8, 1), 0);  // sub-partition 1: warp 1
  auto last = drain(pipe);
  EXPECT_EQ(last[0], 14u);  // cycles 0, 2, ..., 14: turns with sub-partition 1
  EXPECT_EQ(last[1], 15u);
  EXPECT_EQ(last[4], 23u);  // after warp 0, alone from cycle 16
}

// The SM schedules its event where next_event() says: the prediction must be the cycle the request
// really finishes when nothing else arrives.
TEST(SharedPipe, NextEventIsTheCycleTheFirstRequestFinishes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    SharedPipe pipe;
    pipe.reset(16, 4, 1 + trial % 3, trial % 2 ? SharedPipe::Order::kSubPartitions : SharedPipe::Order::kRequests);
    uint64_t now = 0;
    for (int k = 0; k < 12; ++k) {
      now += rng() % 4;
      pipe.advance(now, [](const SharedPipe::Request&, uint64_t) {});
      pipe.enqueue(req(uint16_t(rng() % 16), 1 + rng() % 8, uint8_t(rng() % 4)), now);
    }
    pipe.advance(now, [](const SharedPipe::Request&, uint64_t) {});
    const uint64_t predicted = pipe.next_event(false);
    uint64_t first = SharedPipe::kNone;
    pipe.advance(1 << 20, [&](const SharedPipe::Request&, uint64_t c) { first = std::min(first, c); });
    EXPECT_EQ(predicted, first) << "trial " << trial;
  }
}

// A CTA of 8 warps loads 20 wavefronts each right after a barrier (gemm_fp32's k-step, 4 LDS.128),
// then uses them: with round-robin service no warp's loads are back before most of the burst is
// served, so its math cannot start early (the H200's order, b29 lds_burst.csv).
TEST(SharedPipe, RoundRobinBurstAfterABarrierReturnsEveryWarpsLoadsLate) {
  const char* kernel = R"(kernel burst() {
  grid 1
  block 256
  buffer out : f32[256]
  shared S : f32[2048]
  reg a[4]
  reg s[1]
  bar.sync
  loop r in 0 .. 4 unroll 4 {
    a[0] = ld.shared.v4 S[(tid.x % 32) * 16 + r * 4]
    s[0] = fadd s[0], a[0]
  }
  st.global out[tid.x], s[0]
})";
  auto p = testing::inline_kernel(kernel);
  const std::vector<std::string> rr = {"sm.shared.arbitration=round_robin", "sm.shared.warp_cycles_per_wavefront=2"};
  KernelResult fifo = testing::run_one("h200-sxm", *p, {"sm.shared.arbitration=fifo"});
  KernelResult robin = testing::run_one("h200-sxm", *p, rr);
  EXPECT_EQ(fifo.metrics.at("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
            robin.metrics.at("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"));
  EXPECT_GT(robin.cycles, fifo.cycles);
  // deterministic: the same run twice gives the same cycles
  EXPECT_EQ(testing::run_one("h200-sxm", *p, rr).cycles, robin.cycles);
}

// sm.shared.mio_issue: a shared instruction's LSU interval (4 cycles for 32 lanes on 8 LSU lanes)
// holds the sub-partition's LSU (sub_partition) or only the issuing warp, as the stall count ptxas
// puts on back-to-back LDS.128 does (warp; b33's SASS). One warp alone times the same either way; with
// several warps per sub-partition their loads enter the MIO queue interleaved, so the burst starts
// sooner.
TEST(SharedPipe, PerWarpIssueHoldsOnlyTheIssuingWarp) {
  const char* kernel = R"(kernel loads(W = 8) {
  grid 1
  block W * 32
  buffer out : f32[W * 32]
  shared S : f32[1024]
  reg a[4]
  reg s[1]
  if (warp % 4 == 0) {
    loop r in 0 .. 4 unroll 4 {
      a[r] = ld.shared S[r * 4]
    }
  }
  s[0] = fadd a[0], a[3]
  st.global out[tid.x], s[0]
})";
  for (const char* arb : {"fifo", "sub_partition"}) {
    const std::string a = std::string("sm.shared.arbitration=") + arb;
    auto one = testing::inline_kernel(kernel, {{"W", 1}});
    auto eight = testing::inline_kernel(kernel, {{"W", 8}});
    KernelResult one_sp = testing::run_one("h200-sxm", *one, {a, "sm.shared.mio_issue=sub_partition"});
    KernelResult one_w = testing::run_one("h200-sxm", *one, {a, "sm.shared.mio_issue=warp"});
    EXPECT_EQ(one_sp.cycles, one_w.cycles) << arb << ": one warp holds itself either way";
    KernelResult eight_sp = testing::run_one("h200-sxm", *eight, {a, "sm.shared.mio_issue=sub_partition"});
    KernelResult eight_w = testing::run_one("h200-sxm", *eight, {a, "sm.shared.mio_issue=warp"});
    // the warps of sub-partition 0 load (0 and 4), one wavefront each: sub_partition issues their 8
    // loads 4 cycles apart (32 cycles); warp each warp's 4 loads 4 cycles apart, interleaved (about 16)
    EXPECT_LT(eight_w.cycles + 8, eight_sp.cycles) << arb;
    EXPECT_EQ(eight_w.metrics.at("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
              eight_sp.metrics.at("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"));
  }
}

}  // namespace
}  // namespace gtsim::gpu
