// Control divergence (P3): a warp whose lanes take k paths of equal work takes about k times one
// path; after reconvergence the warp issues at full width again.
#include <gtest/gtest.h>

#include "gpu_test_util.hpp"

namespace gtsim::gpu {
namespace {

KernelResult run_ways(int ways) {
  auto p = testing::lib_kernel("divergence", {{"ways", ways}, {"work", 64}});
  return testing::run_one("h200-sxm", *p);
}

TEST(Simt, EachDivergentPathAddsOnePathsCost) {
  double d1 = double(run_ways(1).cycles), d2 = double(run_ways(2).cycles);
  double d8 = double(run_ways(8).cycles), d32 = double(run_ways(32).cycles);
  double one_path = d2 - d1;
  double slope = (d32 - d8) / 24.0;
  EXPECT_GT(one_path, 0);
  EXPECT_NEAR(slope / one_path, 1.0, 0.10) << "d1=" << d1 << " d2=" << d2 << " d8=" << d8 << " d32=" << d32;
  // 32 paths cost 31 paths more than one path (the code outside the branch is a fixed cost).
  EXPECT_NEAR((d32 - d1) / one_path, 31.0, 31.0 * 0.10);
}

TEST(Simt, ReconvergenceRestoresFullWidthIssue) {
  KernelResult r1 = run_ways(1), r8 = run_ways(8);
  // Every lane does the same work either way: equal thread instructions, 8x the warp instructions
  // inside the branch. The one difference is what runs once per path before the branch, at full
  // width: the loop over the paths' control (divergence.kir: `runtime unroll 1`, as the twin's SASS:
  // iadd, setp, bra; docs/ir.md "Loop control") and the path test's 4 integer instructions, so 7 more
  // times x 7 instructions x 32 lanes for each of the 528 x 8 warps.
  EXPECT_EQ(r8.thread_instructions - r1.thread_instructions, uint64_t(528) * 8 * (8 - 1) * 7 * 32);
  // The branch's body is issued once per path: 8 paths issue over 6x the instructions of one (not
  // 8x: the prologue that computes lane % ways, 36 instructions as the twin's, runs once).
  EXPECT_GT(r8.warp_instructions, r1.warp_instructions * 6);
  // The store after the branch is one full-width coalesced request per warp (528 CTAs x 8 warps).
  EXPECT_EQ(r8.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"], 528 * 8);
  EXPECT_EQ(r8.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"], 528 * 8 * 4);
}

}  // namespace
}  // namespace gtsim::gpu
