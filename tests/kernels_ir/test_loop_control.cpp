// Loop control (docs/ir.md "Loop control"): per group of `unroll` iterations a loop issues the
// instructions nvcc emits for it: an integer add (counter), an integer compare into a predicate and a
// branch; loops fully unrolled at build time issue none.
#include <gtest/gtest.h>

#include <bit>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "kernels_ir/ast.hpp"
#include "kernels_ir/counts.hpp"
#include "kernels_ir/printer.hpp"
#include "sim/error.hpp"

using namespace gtsim::ir;
using namespace gtsim::ir::test;

namespace {

bool is_control(const Program& p, const DynInst& d) {
  return p.instruction(d.static_id).text.find("loop control") != std::string::npos;
}

struct Split {
  std::vector<DynInst> body, control;
  int branches = 0, ints = 0;
};

Split split(const Program& p, const std::vector<DynInst>& v) {
  Split s;
  for (const auto& d : v) {
    if (!is_control(p, d)) {
      s.body.push_back(d);
      continue;
    }
    s.control.push_back(d);
    s.branches += d.op == OpClass::kBranch;
    s.ints += d.op == OpClass::kInt;
  }
  return s;
}

std::string one_loop(const std::string& bounds, const std::string& unroll = "") {
  return "kernel k(n = 64) {\n grid 2 block 32\n loop i in " + bounds + (unroll.empty() ? "" : " unroll " + unroll) +
         " {\n  x = fadd x, x\n }\n y = fmul x, x\n}\n";
}

}  // namespace

TEST(LoopControl, UnrolledLoopIssuesOneBranchPerGroup) {
  auto p = build_text(one_loop("0 .. n", "8"));
  auto v = run_warp(*p);
  auto s = split(*p, v);
  EXPECT_EQ(s.body.size(), 65u);
  EXPECT_EQ(s.branches, 64 / 8);
  EXPECT_EQ(s.ints, 2 * 64 / 8);
  // each group: iadd, setp, 8 fadd, bra (the counter update and the test are hoisted, as ptxas does)
  for (size_t g = 0; g < 8; ++g) {
    size_t b = g * 11;
    EXPECT_EQ(v[b].op, OpClass::kInt);
    EXPECT_EQ(v[b + 1].op, OpClass::kInt);
    for (size_t i = 2; i < 10; ++i) EXPECT_EQ(v[b + i].op, OpClass::kFp32) << g << " " << i;
    EXPECT_EQ(v[b + 10].op, OpClass::kBranch);
  }
  EXPECT_EQ(v.back().op, OpClass::kFp32);  // the fmul after the loop
}

TEST(LoopControl, BranchReadsThePredicateTheCompareWrites) {
  auto p = build_text(one_loop("0 .. n", "8"));
  auto v = run_warp(*p);
  ASSERT_GE(v.size(), 11u);
  const DynInst &iadd = v[0], &setp = v[1], &bra = v[10];
  ASSERT_EQ(iadd.n_dst, 1);
  ASSERT_EQ(setp.n_dst, 1);
  ASSERT_EQ(bra.n_src, 1);
  EXPECT_EQ(bra.n_dst, 0);
  EXPECT_EQ(iadd.src[0], iadd.dst[0]);  // counter += unroll
  EXPECT_EQ(setp.src[0], iadd.dst[0]);  // predicate = counter < hi
  EXPECT_EQ(bra.src[0], setp.dst[0]);   // @predicate bra
  EXPECT_NE(setp.dst[0], iadd.dst[0]);
  EXPECT_EQ(bra.flops, 0u);
  EXPECT_EQ(bra.active, kFullMask);
}

TEST(LoopControl, DefaultUnrollIsFourForRuntimeTripCounts) {
  // ctaid.x makes the trip count a run-time value: nvcc unrolls such loops 4x by default
  auto p = build_text(one_loop("0 .. n + ctaid.x"));
  auto s = split(*p, run_warp(*p, Dim3{1, 0, 0}));
  EXPECT_EQ(s.body.size(), 66u);
  EXPECT_EQ(s.branches, 16 + 1);  // 65 = 16 groups of 4 + a remainder group of 1
  EXPECT_EQ(s.ints, 2 * 17);
  // a trip count known at build time but larger than the default unroll: groups of 4 too
  auto q = build_text(one_loop("0 .. n"));
  EXPECT_EQ(split(*q, run_warp(*q)).branches, 16);
}

TEST(LoopControl, SmallConstantTripCountIsFullyUnrolled) {
  for (const auto& [bounds, unroll] : std::vector<std::pair<std::string, std::string>>{
           {"0 .. 3", ""}, {"0 .. 4", ""}, {"0 .. 4", "4"}, {"0 .. 8", "8"}, {"0 .. n / 8", "8"}, {"5 .. 0", "1"}}) {
    auto p = build_text(one_loop(bounds, unroll));
    auto v = run_warp(*p);
    EXPECT_TRUE(split(*p, v).control.empty()) << bounds << " unroll " << unroll;
    EXPECT_EQ(p->instruction_count(), 2u) << bounds;  // no static control instructions either
  }
  auto p = build_text(one_loop("0 .. 5"));  // 5 > 4: a group of 4 and a remainder group of 1
  EXPECT_EQ(split(*p, run_warp(*p)).branches, 2);
}

TEST(LoopControl, RemainderIterationsFormOneShorterGroup) {
  auto p = build_text(one_loop("0 .. 10", "4"));
  auto v = run_warp(*p);
  auto s = split(*p, v);
  EXPECT_EQ(s.branches, 2 + 1);
  EXPECT_EQ(s.ints, 2 * (2 + 1));
  // the last group: iadd, setp, fadd, fadd, bra, then the fmul after the loop
  size_t n = v.size();
  ASSERT_EQ(n, 10u + 1 + 3 * 3);
  EXPECT_EQ(v[n - 2].op, OpClass::kBranch);
  EXPECT_EQ(v[n - 3].op, OpClass::kFp32);
  EXPECT_EQ(v[n - 4].op, OpClass::kFp32);
  EXPECT_EQ(v[n - 5].op, OpClass::kInt);
  EXPECT_EQ(v[n - 6].op, OpClass::kInt);
  EXPECT_EQ(v[n - 7].op, OpClass::kBranch);
  // a negative step counts the same way
  auto q = build_text(one_loop("10 .. 0 step -1", "4"));
  EXPECT_EQ(split(*q, run_warp(*q)).branches, 3);
}

TEST(LoopControl, RuntimeTripCountIsNeverFullyUnrolled) {
  // `runtime`: the trip count is a kernel argument, so a small value still runs the loop's code
  auto p = build_text(
      "kernel k(n = 16) {\n grid 1 block 32\n loop i in 0 .. n runtime unroll 16 {\n  x = fadd x, x\n }\n}\n");
  EXPECT_EQ(split(*p, run_warp(*p)).branches, 1);
  // control then scales with the trip count (the validation extrapolates from small counts)
  for (int64_t n : {16, 32, 64, 256}) {
    auto q = build_text(
        "kernel k(n = 16) {\n grid 1 block 32\n loop i in 0 .. n runtime unroll 16 {\n  x = fadd x, x\n }\n}\n",
        {{"n", n}});
    EXPECT_EQ(split(*q, run_warp(*q)).branches, n / 16) << n;
  }
  // without `runtime` the same loop with n = 16 is fully unrolled
  auto r = build_text("kernel k(n = 16) {\n grid 1 block 32\n loop i in 0 .. n unroll 16 {\n  x = fadd x, x\n }\n}\n");
  EXPECT_EQ(split(*r, run_warp(*r)).branches, 0);
}

TEST(LoopControl, UnrollOneIsARolledLoop) {
  auto p = build_text(one_loop("0 .. 1", "1"));  // `unroll 1`: never unrolled, even for one iteration
  EXPECT_EQ(split(*p, run_warp(*p)).branches, 1);
  auto q = build_text(one_loop("0 .. n", "1"));
  auto s = split(*q, run_warp(*q));
  EXPECT_EQ(s.branches, 64);
  EXPECT_EQ(s.ints, 128);
}

TEST(LoopControl, LaneVaryingTripCountUsesTheLongestLane) {
  auto p = build_text(one_loop("0 .. lane + 1", "8"));  // lanes run 1 .. 32 iterations
  auto v = run_warp(*p);
  auto s = split(*p, v);
  EXPECT_EQ(s.branches, 32 / 8);
  // the branch closing group g runs on the lanes still in the loop at its last iteration
  int g = 0;
  for (const auto& d : s.control)
    if (d.op == OpClass::kBranch) {
      EXPECT_EQ(d.active, kFullMask << (8 * g + 7)) << g;
      ++g;
    }
}

TEST(LoopControl, EmptyTripCountIssuesNothing) {
  auto p = build_text(one_loop("0 .. n - 64 + ctaid.x", "4"));  // 0 iterations in CTA 0
  auto v = run_warp(*p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].op, OpClass::kFp32);
}

TEST(LoopControl, NestedLoopsRestartTheirGroups) {
  auto p = build_text(
      "kernel k(n = 6) {\n grid 1 block 32\n loop j in 0 .. n unroll 1 {\n  loop i in 0 .. n unroll 4 {\n"
      "   x = fadd x, x\n  }\n }\n}\n");
  auto s = split(*p, run_warp(*p));
  EXPECT_EQ(s.body.size(), 36u);
  EXPECT_EQ(s.branches, 6 * 1 + 6 * (1 + 1));  // outer: one per iteration; inner: a group of 4 and one of 2, each time
}

TEST(LoopControl, CountsIncludeTheControlInstructions) {
  auto p = build_lib("fixed_work.kir", {{"ctas", 2}, {"work", 64}});
  auto c = count_instructions(*p);
  ASSERT_EQ(c.static_bodies.size(), 2u);
  EXPECT_EQ(c.static_bodies[1].per_class[size_t(OpClass::kFp32)], 2u);
  EXPECT_EQ(c.static_bodies[1].per_class[size_t(OpClass::kInt)], 2u);  // iadd + setp
  EXPECT_EQ(c.static_bodies[1].per_class[size_t(OpClass::kBranch)], 1u);
  EXPECT_EQ(c.static_bodies[1].control[size_t(OpClass::kInt)], 2u);
  EXPECT_EQ(c.static_bodies[1].control[size_t(OpClass::kBranch)], 1u);
  EXPECT_EQ(c.static_bodies[1].control[size_t(OpClass::kFp32)], 0u);
  EXPECT_EQ(c.static_bodies[1].unroll, 16u);
  EXPECT_EQ(c.static_bodies[0].unroll, 0u);
  EXPECT_EQ(c.to_json()["static"][1]["loop_control"]["unroll"], 16);
  EXPECT_EQ(c.to_json()["static"][1]["loop_control"]["per_class"]["branch"], 1);
  // fixed_work.kir: unroll 16 (the twin's SASS: 32 FFMA + IADD3 + ISETP + BRA per 16 iterations)
  EXPECT_EQ(c.dynamic[size_t(OpClass::kBranch)], uint64_t(2 * 32 * 64 / 16));
  EXPECT_EQ(c.to_json()["dynamic"]["per_class"]["branch"], 2 * 32 * 64 / 16);
}

TEST(LoopControl, UnrollOutOfRangeIsAnError) {
  EXPECT_THROW(build_text(one_loop("0 .. n", "0")), gtsim::InputError);
  EXPECT_THROW(build_text(one_loop("0 .. n", "n - 65")), gtsim::InputError);
  EXPECT_THROW(build_text(one_loop("0 .. n", "lane")), gtsim::InputError);
}

TEST(LoopControl, RuntimeKeywordRoundTrips) {
  for (const char* head :
       {"loop i in 0 .. n step 2 runtime unroll 8 {", "loop i in 0 .. n step 2 unroll 8 runtime {"}) {
    auto k = parse_kernel_string(
        std::string("kernel k(n = 64) {\n grid 1 block 32\n ") + head + "\n  x = fadd x, x\n }\n}\n", "t.kir");
    ASSERT_EQ(k->body.size(), 1u);
    EXPECT_TRUE(k->body[0].runtime_trip);
    std::string text = print_kernel(*k);
    EXPECT_NE(text.find("step 2 runtime unroll 8 {"), std::string::npos) << text;
    EXPECT_EQ(*parse_kernel_string(text, "t.kir"), *k);
  }
}
