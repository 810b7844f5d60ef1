// gemm_align1.kir, cuBLAS's fallback when a leading dimension breaks 16-byte alignment (cutlass_75
// s1688 align1: element loads pipelined through registers, two stages, split-K by K slices), and its
// place in the selection. Each test names the hardware rule; the simulated shapes stay small.
#include <gtest/gtest.h>

#include "models/analytic/gemm_plan.hpp"
#include "models/analytic/gemm_select.hpp"
#include "sim/config.hpp"
#include "sim/error.hpp"
#include "tests/test_paths.hpp"

// Everything in a namespace of its own: the unity build compiles several test files as one.
namespace gemm_align1_test {
using namespace gtsim;
using analytic::GemmSchedule;

namespace {

std::shared_ptr<ConfigNode> machine(const std::string& file) {
  return ConfigNode::load_file(gtsim::testing::cfg_path(file));
}

analytic::GemmTile align1_tile(const std::string& s) { return analytic::parse_align1_tile(s); }

}  // namespace

// An element load's L2 latency is waited for before its value can be stored to shared memory. The
// element-load variant of gemm_persistent.kir waits for each pair in turn; the align1 kernel issues
// a whole k-tile's loads into registers a k-step ahead and computes the current k-tile meanwhile, so
// the waits overlap the MMAs: the same odd-sized GEMM runs well over 1.5x faster, with the same tile.
TEST(Align1, PipeliningTheElementLoadsThroughRegistersHidesTheirL2Latency) {
  const auto hw = machine("h100-sxm.yaml");
  const int64_t n = 515;  // odd: 2-byte rows of A and B
  const auto sync = analytic::plan_gemm(*hw, n, n, n, analytic::parse_tile("128x128"), GemmSchedule::kDataParallel);
  const auto piped = analytic::plan_gemm(*hw, n, n, n, align1_tile("128x128"), GemmSchedule::kAlign1, 1);
  ASSERT_EQ(sync.vec_a, 1);
  ASSERT_EQ(piped.vec_a, 1);
  const auto ts = analytic::simulate_gemm(*hw, sync, true), tp = analytic::simulate_gemm(*hw, piped, true);
  EXPECT_GT(ts.time_us, 1.5 * tp.time_us) << ts.time_us << " vs " << tp.time_us;
}

// Split-K by K slices writes one fp32 partial tile per slice and sums them in a second launch (cuBLAS's
// splitKreduce_kernel): the reduction is timed, and the workspace (slices x M x N x 4 bytes) is read
// from the L2 at least once more than the unsplit GEMM reads. A GEMM of few tiles on many SMs gains.
TEST(Align1, SplitKAddsAReductionLaunchAndFillsIdleSms) {
  const auto hw = machine("h100-sxm.yaml");
  const int64_t m = 255, n = 255, k = 2047;  // 2 x 2 tiles of 128x128 on 132 SMs, 64 k-steps
  const auto whole = analytic::plan_gemm(*hw, m, n, k, align1_tile("128x128"), GemmSchedule::kAlign1, 1);
  const auto split = analytic::plan_gemm(*hw, m, n, k, align1_tile("128x128"), GemmSchedule::kAlign1, 4);
  EXPECT_EQ(whole.grid, 4);
  EXPECT_EQ(split.ksplit, 4);
  EXPECT_EQ(split.grid, 16);
  const auto tw = analytic::simulate_gemm(*hw, whole, true), tsp = analytic::simulate_gemm(*hw, split, true);
  EXPECT_EQ(tw.reduce_us, 0);
  EXPECT_GT(tsp.reduce_us, 0);
  EXPECT_GT(tsp.l2_read_bytes, tw.l2_read_bytes + uint64_t(4 * m * n * 4 * 0.9));
  EXPECT_LT(tsp.time_us, 0.7 * tw.time_us) << tsp.time_us << " vs " << tw.time_us;
}

// The operands reach the SMs once per tile: each CTA reads its BM rows of A and BN columns of B over
// all of K through the L2 (element loads: a warp's 32 two-byte lanes are one 64-byte request, rows
// not aligned to lines touch one more sector), so the L2 read bytes are those of the tiles within 15%.
TEST(Align1, EachTileReadsItsOperandPanelsOnceThroughTheL2) {
  const auto hw = machine("a100-40gb.yaml");
  const int64_t n = 511;
  const auto p = analytic::plan_gemm(*hw, n, n, n, align1_tile("128x128"), GemmSchedule::kAlign1, 1);
  const auto t = analytic::simulate_gemm(*hw, p, true);
  const double panels = double(p.tiles) * (128.0 + 128.0) * double(n) * 2;  // bytes, edge tiles masked less
  const double useful = double(p.tiles_m) * double(n) * double(n) * 2 + double(p.tiles_n) * double(n) * double(n) * 2;
  EXPECT_GT(double(t.l2_read_bytes), 0.85 * useful);
  EXPECT_LT(double(t.l2_read_bytes), 1.15 * panels);
}

// Rows that break 16-byte alignment leave Hopper's TMA kernels and Ampere's cp.async kernels: the
// selection picks the align1 kernel (whole or split) for an odd square GEMM on both machines, and an
// aligned one never gets it.
TEST(Align1, MisalignedRowsSelectTheAlign1KernelOnHopperAndAmpere) {
  for (const char* file : {"h100-sxm.yaml", "a100-40gb.yaml"}) {
    const auto hw = machine(file);
    const auto c = analytic::rank_gemm_candidates(*hw, 1793, 1793, 1793);
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c[0].plan.schedule, GemmSchedule::kAlign1) << file << ": " << c[0].why;
    EXPECT_EQ(analytic::gemm_kernel_file(c[0].plan), "gemm_align1.kir");
    EXPECT_NE(c[0].why.find("pipelined through registers"), std::string::npos) << c[0].why;
    for (const auto& x : analytic::rank_gemm_candidates(*hw, 1792, 1792, 1792))
      EXPECT_NE(x.plan.schedule, GemmSchedule::kAlign1) << file;
  }
}

TEST(Align1, OtherDtypesAndUnknownTilesAreRefused) {
  const auto hw = machine("h100-sxm.yaml");
  EXPECT_THROW(analytic::plan_gemm(*hw, 513, 513, 513, align1_tile("128x128"), GemmSchedule::kAlign1, 1, "f16"),
               InputError);
  EXPECT_THROW(analytic::parse_align1_tile("64x64"), InputError);
  EXPECT_EQ(analytic::parse_schedule("align1"), GemmSchedule::kAlign1);
}

}  // namespace gemm_align1_test
