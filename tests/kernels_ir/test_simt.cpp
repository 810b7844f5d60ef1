#include <gtest/gtest.h>

#include <bit>

#include "helpers.hpp"
#include "kernels_ir/counts.hpp"

using namespace gtsim::ir;
using namespace gtsim::ir::test;

TEST(SimtDivergence, FourWayBranchRunsDisjointPathsThenReconverges) {
  auto p = build_lib("divergence.kir", {{"ways", 4}, {"work", 3}});
  auto v = run_warp(*p);
  uint32_t seen = 0, path = 0;
  int ffma = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& d = v[i];
    if (p->instruction(d.static_id).text.find("ffma") == std::string::npos) continue;
    ++ffma;
    EXPECT_EQ(std::popcount(d.active), 8);
    if (d.active != path) {
      EXPECT_EQ(seen & d.active, 0u);  // a new path: disjoint from the earlier ones
      path = d.active;
      seen |= d.active;
    }
  }
  EXPECT_EQ(ffma, 4 * 3 * 2);
  EXPECT_EQ(seen, kFullMask);
  EXPECT_EQ(v.back().op, OpClass::kStGlobal);
  EXPECT_EQ(v.back().active, kFullMask);  // reconverged
  EXPECT_EQ(v[v.size() - 2].active, kFullMask);
}

TEST(SimtDivergence, IfElseTakenPathFirst) {
  auto p = build_text(
      "kernel k() {\n grid 1 block 32\n if (lane < 8) {\n  a = fadd a, a\n } else {\n  b = fmul b, b\n }\n c = ffma a, "
      "b, c\n}\n");
  auto v = run_warp(*p);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].active, 0xffu);
  EXPECT_EQ(v[1].active, 0xffffff00u);
  EXPECT_EQ(v[2].active, kFullMask);
}

TEST(SimtLoop, LaneVaryingBoundsLanesLeaveIndividually) {
  auto p =
      build_text("kernel k() {\n grid 1 block 32\n loop i in 0 .. lane {\n  x = fadd x, x\n }\n y = fmul x, x\n}\n");
  auto all = run_warp(*p);
  std::vector<DynInst> v;  // without the loop control (31 iterations: 7 groups of 4 and one of 3, 3 each)
  for (const auto& d : all)
    if (d.op != OpClass::kBranch && p->instruction(d.static_id).text.find("loop control") == std::string::npos)
      v.push_back(d);
  EXPECT_EQ(all.size() - v.size(), size_t(3 * (7 + 1)));
  ASSERT_EQ(v.size(), 32u);
  for (int i = 0; i < 31; ++i) EXPECT_EQ(v[size_t(i)].active, kFullMask << (i + 1)) << i;
  EXPECT_EQ(v[31].active, kFullMask);
}

TEST(SimtExit, ExitedLanesLeaveTheWarp) {
  auto p = build_text("kernel k() {\n grid 1 block 32\n if (lane >= 4) {\n  exit\n }\n x = fadd x, x\n}\n");
  auto v = run_warp(*p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].active, 0xfu);
  EXPECT_EQ(v[0].live, 0xfu);
}

TEST(ExecutorValues, ShuffleTreeAndIexprTrackValues) {
  auto p = build_text(
      "kernel k() {\n grid 1 block 32\n buffer b : i32[64] init iota\n v = ld.global b[lane * 2]\n"
      " loop k in 0 .. 5 {\n  t = shfl.bfly v, 16 >> k\n  v = iadd v, t\n }\n"
      " x = ld.global b[v / 64]\n}\n");
  auto v = run_warp(*p);
  // sum over lanes of 2*lane = 992 in every lane; 992 / 64 = 15 -> element 15
  EXPECT_EQ(v.back().addr[7], p->buffers()[0].base + 15 * 4);
}

TEST(DynamicCounts, FixedWorkMatchesClosedForm) {
  const int64_t ctas = 3, work = 50;
  auto p = build_lib("fixed_work.kir", {{"ctas", ctas}, {"work", work}});
  auto c = count_instructions(*p);
  EXPECT_EQ(c.warps, uint64_t(ctas * 32));
  // per warp: 2*work ffma + fmul + fadd (init) + fadd (sum) on the fp32 pipe
  EXPECT_EQ(c.dynamic[size_t(OpClass::kFp32)], uint64_t(ctas * 32 * (2 * work + 3)));
  EXPECT_EQ(c.dynamic[size_t(OpClass::kStGlobal)], uint64_t(ctas * 32));
  EXPECT_EQ(c.flops, uint64_t(ctas * 1024 * (4 * work + 3)));
  auto j = c.to_json();
  EXPECT_EQ(j["dynamic"]["per_class"]["fp32"], ctas * 32 * (2 * work + 3));
  EXPECT_EQ(c.static_bodies.size(), 2u);
  EXPECT_EQ(c.static_bodies[1].per_class[size_t(OpClass::kFp32)], 2u);
}

TEST(DynamicCounts, GemmMmaCountIsExact) {
  auto p = build_lib("gemm_tiled.kir", {{"M", 256}, {"N", 384}, {"K", 96}});
  auto c = count_instructions(*p);
  // CTAs 3 x 2, 8 warps, K/16 steps, 16 mma per step
  EXPECT_EQ(c.dynamic[size_t(OpClass::kMma)], uint64_t(6 * 8 * (96 / 16) * 16));
  // 2MNK in the mma, and one multiply per output in the epilogue (the twin's alpha scaling)
  EXPECT_EQ(c.flops, uint64_t(2) * 256 * 384 * 96 + uint64_t(256) * 384);
}

TEST(ExecutorSpeed, ManyInstructionsRun) {
  auto p = build_lib("fixed_work.kir", {{"ctas", 1}, {"work", 100000}});
  WarpExecutor w(*p, {0, 0, 0}, 0);
  DynInst d;
  uint64_t n = 0;
  while (w.next(d)) ++n;
  EXPECT_EQ(n, 200006u + 100000 / 16 * 3);  // + iadd, setp, bra per 16 iterations (fixed_work.kir: unroll 16)
  auto q = build_lib("stream_copy.kir");
  n = 0;
  for (uint32_t c = 0; c < 2000; ++c)
    for (uint32_t wi = 0; wi < 8; ++wi) {
      WarpExecutor x(*q, {c, 0, 0}, wi);
      while (x.next(d)) ++n;
    }
  EXPECT_EQ(n, 2000u * 8 * 8);
}
