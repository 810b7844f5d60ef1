// `gtsim gemm`'s kernel selection (models/analytic/gemm_select.hpp): an analytic heuristic, as a
// library's, ranks the tile menu's schedules; each test names the hardware rule the ranking follows.
// The ranking never simulates; the tests that simulate stay at 512 or below.
#include <gtest/gtest.h>

#include <set>

#include "models/analytic/gemm_plan.hpp"
#include "models/analytic/gemm_select.hpp"
#include "sim/config.hpp"
#include "sim/error.hpp"
#include "tests/test_paths.hpp"

// Everything in a namespace of its own: the unity build compiles several test files as one.
namespace gemm_select_test {
using namespace gtsim;
using analytic::GemmCandidate;
using analytic::GemmSchedule;

namespace {

std::shared_ptr<ConfigNode> machine(const std::string& file, const std::vector<std::string>& sets = {}) {
  return ConfigNode::load_file(gtsim::testing::cfg_path(file), sets);
}

std::vector<GemmCandidate> rank(const std::string& file, int64_t M, int64_t N, int64_t K,
                                const std::string& dtype = "bf16", const std::vector<std::string>& sets = {}) {
  return analytic::rank_gemm_candidates(*machine(file, sets), M, N, K, dtype);
}

// The data-parallel plan of a menu tile, as the ranking plans it.
analytic::GemmPlan dp_plan(const std::string& file, int64_t M, int64_t N, int64_t K, const analytic::GemmTile& t) {
  return analytic::plan_gemm(*machine(file), M, N, K, t, GemmSchedule::kDataParallel);
}

}  // namespace

// A grid of few tiles leaves most SMs idle; splitting K gives every SM work and costs one reduction
// (CUTLASS's parallel split-K). The ranking offers split-k exactly for the tiles whose data-parallel
// grid fills less than one wave, and a 512 x 512 x 8192 GEMM (16 tiles of 128x128 on 132 SMs) picks it.
TEST(GemmSelect, ASmallGridGetsSplitKWhenItsTilesFillLessThanAWave) {
  const auto c = rank("h200-sxm.yaml", 512, 512, 8192);
  EXPECT_EQ(c.front().plan.schedule, GemmSchedule::kSplitK) << c.front().why;
  EXPECT_GT(c.front().plan.ksplit, 1);
  EXPECT_NE(c.front().why.find("K split in"), std::string::npos) << c.front().why;
  std::set<std::string> split_tiles;
  for (const auto& x : c)
    if (x.plan.schedule == GemmSchedule::kSplitK) {
      split_tiles.insert(x.plan.tile.str());
      EXPECT_GT(x.plan.ksplit, 1) << x.plan.tile.str();
      EXPECT_GT(x.reduce_us, 0) << x.plan.tile.str();
    }
  for (const auto& t : analytic::gemm_tile_menu("bf16")) {
    const auto p = dp_plan("h200-sxm.yaml", 512, 512, 8192, t);
    EXPECT_EQ(split_tiles.count(t.str()) == 1, p.tiles < p.wave_size) << t.str();
  }
  // the best split-k candidate beats the best data-parallel one, reduction included
  double best_dp = 1e300, best_split = 1e300;
  for (const auto& x : c) {
    double& best = x.plan.schedule == GemmSchedule::kSplitK ? best_split : best_dp;
    best = std::min(best, x.score_us);
  }
  EXPECT_LT(best_split, best_dp);
  // a GEMM that fills many waves is never split
  for (const auto& x : rank("h200-sxm.yaml", 4096, 4096, 4096)) EXPECT_NE(x.plan.schedule, GemmSchedule::kSplitK);
}

// A leading dimension that is not a multiple of 8 bf16 elements (16 bytes) cannot use 16-byte
// cp.async: K = 1793 (odd) loads A two bytes at a time, 8 times the load instructions. Every
// candidate says so and pays for it; the same GEMM with K = 1792 pays nothing, and costs less per flop.
TEST(GemmSelect, AMisalignedLeadingDimensionLosesTheSixteenByteLoads) {
  for (const char* hw : {"a100-40gb.yaml", "h200-sxm.yaml"}) {
    const auto bad = rank(hw, 1793, 1793, 1793), good = rank(hw, 1792, 1792, 1792);
    for (const auto& x : bad) {
      EXPECT_EQ(x.plan.vector_bytes, 2) << hw;
      EXPECT_GT(x.load_us, 0) << hw << " " << x.plan.tile.str();
      EXPECT_NE(x.why.find("2-byte loads"), std::string::npos) << x.why;
    }
    for (const auto& x : good) {
      EXPECT_EQ(x.plan.vector_bytes, 16) << hw;
      EXPECT_EQ(x.load_us, 0) << hw;
      EXPECT_NE(x.why.find("16-byte loads"), std::string::npos) << x.why;
    }
    const double per_flop_bad = bad.front().score_us / (1793.0 * 1793.0 * 1793.0);
    const double per_flop_good = good.front().score_us / (1792.0 * 1792.0 * 1792.0);
    EXPECT_GT(per_flop_bad, 1.05 * per_flop_good) << hw;
    // the penalty is the extra load instructions: N = 1796 (8-byte rows of B) pays less than N = 1793
    const auto half = rank(hw, 1792, 1796, 1792);
    double load_half = 0, load_bad = 0;
    for (const auto& x : half)
      if (x.plan.tile.str() == "128x128" && x.plan.schedule == GemmSchedule::kDataParallel) load_half = x.load_us;
    for (const auto& x : rank(hw, 1792, 1793, 1792))
      if (x.plan.tile.str() == "128x128" && x.plan.schedule == GemmSchedule::kDataParallel) load_bad = x.load_us;
    EXPECT_GT(load_half, 0) << hw;
    EXPECT_GT(load_bad, 2 * load_half) << hw;
  }
}

// Wave quantization: CTAs go to SMs breadth-first and co-resident CTAs share an SM's tensor cores, so
// the time is that of the busiest SM, ceil(tiles / SMs) tiles (CtaScheduler.* in test_gpu_waves.cpp).
// With the memory side made ample (--set), the rounds alone decide: a large square GEMM picks the
// tile whose busiest SM has the least work, computed here from the plans, and where a tile's count is
// a multiple of the SM count (8448^3 on the H200's 132 SMs: 33 x 33 tiles of 128x128, not 256x128's
// 16.5 rounds) the pick fills whole rounds.
TEST(GemmSelect, ALargeSquareGemmPicksATileThatFillsWholeWaves) {
  const std::vector<std::string> ample = {"l2.bytes_per_cycle_per_slice=65536", "noc.bytes_per_cycle_per_sm=65536",
                                          "noc.bytes_per_cycle_per_group=524288", "hbm.bandwidth_gbps=4000000"};
  for (int64_t n : {4096, 6144, 8448, 10240}) {
    const auto c = rank("h200-sxm.yaml", n, n, n, "bf16", ample);
    EXPECT_EQ(c.front().bound, "compute") << n;
    // the busiest SM's MMA work per tile of the menu, from the plans (K is a multiple of every BK)
    double least = 1e300;
    bool whole = false;
    for (const auto& t : analytic::gemm_tile_menu("bf16")) {
      const auto p = dp_plan("h200-sxm.yaml", n, n, n, t);
      if (p.ctas_per_sm == 0) continue;
      least = std::min(least, double((p.tiles + p.sms - 1) / p.sms) * t.bm * t.bn);
      whole = whole || (p.tiles % p.sms == 0 && p.tile_efficiency == 1.0);
    }
    const auto& pick = c.front().plan;
    EXPECT_EQ(double(c.front().rounds) * pick.tile.bm * pick.tile.bn, least) << n << ": " << c.front().why;
    if (whole) {
      EXPECT_EQ(c.front().round_fill, 1.0) << n << ": " << c.front().why;
    }
    if (n == 8448) {
      EXPECT_TRUE(whole);
    }
  }
  // on the config as it is, the memory terms count too: 256x128 (the fewest operand bytes) at 8448^3
  // fills 16.5 of 17 rounds, and the L2 traffic of the smaller tiles costs more than that half round
  const auto real = rank("h200-sxm.yaml", 8448, 8448, 8448);
  EXPECT_GT(real.front().round_fill, 0.95) << real.front().why;
}

// Every candidate is a kernel the machine can launch (at least one CTA per SM), with a finite score
// and its reasons; the list is the menu's tiles in both schedules (plus split-k for small grids), and
// a dtype the machine has no rate for is refused.
TEST(GemmSelect, EveryCandidateCanLaunch) {
  struct Case {
    const char* hw;
    int64_t M, N, K;
    const char* dtype;
  };
  for (const Case& k :
       {Case{"a100-40gb.yaml", 1024, 1024, 1024, "bf16"}, Case{"h200-sxm.yaml", 8192, 8192, 8192, "bf16"},
        Case{"h200-sxm.yaml", 100, 3000, 77, "f16"}, Case{"h200-sxm.yaml", 4096, 512, 1024, "e4m3"},
        Case{"a100-40gb.yaml", 2048, 2048, 512, "tf32"}, Case{"a100-40gb.yaml", 1000, 1000, 1000, "f32"}}) {
    const auto c = rank(k.hw, k.M, k.N, k.K, k.dtype);
    ASSERT_FALSE(c.empty()) << k.hw << " " << k.dtype;
    size_t plain = 0, ws = 0;
    for (const auto& x : c) {
      EXPECT_GT(x.plan.ctas_per_sm, 0u) << k.hw << " " << x.plan.tile.str();
      EXPECT_GT(x.score_us, 0);
      EXPECT_LT(x.score_us, 1e9);
      EXPECT_FALSE(x.why.empty());
      EXPECT_EQ(x.plan.dtype, analytic::canonical_gemm_dtype(k.dtype));
      if (x.plan.schedule == GemmSchedule::kSplitK) {
        EXPECT_EQ(x.plan.dtype, "bf16");
      } else if (x.plan.schedule == GemmSchedule::kWarpSpecialized) {
        EXPECT_TRUE(x.plan.dtype == "bf16" || x.plan.dtype == "e4m3") << x.plan.dtype;
        ++ws;
      } else {
        ++plain;
      }
    }
    // f32 runs data-parallel only (gemm_fp32.kir); the tensor-core dtypes both schedules; Hopper's bf16
    // and e4m3 also the warp-specialized menu (every shape here with wgmma is aligned)
    const size_t menu = analytic::gemm_tile_menu(k.dtype).size();
    EXPECT_EQ(plain, std::string(k.dtype) == "f32" ? menu : 2 * menu) << k.hw << " " << k.dtype;
    const bool hopper_bf16 =
        std::string(k.hw) != "a100-40gb.yaml" && (std::string(k.dtype) == "bf16" || std::string(k.dtype) == "e4m3");
    EXPECT_EQ(ws, hopper_bf16 ? analytic::gemm_wgmma_menu().size() : 0u) << k.hw << " " << k.dtype;
    for (size_t i = 1; i < c.size(); ++i) EXPECT_LE(c[i - 1].score_us, c[i].score_us);
  }
  EXPECT_THROW(rank("a100-40gb.yaml", 1024, 1024, 1024, "e4m3"), InputError);  // no fp8 mma.sync on Ampere
  EXPECT_THROW(rank("a100-40gb.yaml", 0, 1024, 1024), InputError);
}

// The score is built from the config's own rates: twice the mma.sync rate halves the compute term,
// twice the HBM bandwidth halves the DRAM term, a longer launch overhead adds to every score.
TEST(GemmSelect, TheScoreReadsItsRatesFromTheConfig) {
  auto find = [](const std::vector<GemmCandidate>& c) {
    for (const auto& x : c)
      if (x.plan.tile.str() == "128x128" && x.plan.schedule == GemmSchedule::kDataParallel) return x;
    ADD_FAILURE() << "no 128x128 data-parallel candidate";
    return c.front();
  };
  const auto base = find(rank("a100-40gb.yaml", 2048, 2048, 2048));
  const auto fast =
      find(rank("a100-40gb.yaml", 2048, 2048, 2048, "bf16", {"sm.tensor.mma_sync_flops_per_cycle.bf16=4096"}));
  const auto wide = find(rank("a100-40gb.yaml", 2048, 2048, 2048, "bf16", {"hbm.bandwidth_gbps=3110"}));
  const auto slow = find(rank("a100-40gb.yaml", 2048, 2048, 2048, "bf16", {"launch.overhead_us=13.5"}));
  EXPECT_NEAR(fast.compute_us, base.compute_us / 2, 1e-9 * base.compute_us);
  EXPECT_NEAR(wide.dram_us, base.dram_us / 2, 1e-9 * base.dram_us);
  EXPECT_NEAR(slow.score_us - base.score_us, 10.0, 1e-9);
}

// The ranking is a closed form per candidate (no simulation).
TEST(GemmSelect, RankingIsAnalyticItSimulatesNothing) {
  // a 16384^3 GEMM would take minutes to simulate: the ranking only plans and scores (its speed is
  // the CLI's own timing, not a unit test's business)
  auto hw = machine("h200-sxm.yaml");
  const auto c = analytic::rank_gemm_candidates(*hw, 16384, 16384, 16384, "bf16");
  ASSERT_FALSE(c.empty());
  for (const auto& x : c) {
    EXPECT_FALSE(x.simulated);
    EXPECT_EQ(x.timing.time_us, 0);
    EXPECT_GT(x.score_us, 0);
  }
}

// select_gemm simulates the top candidate only; autotune simulates the best three distinct launches
// by score and keeps the fastest simulated one (small GEMMs: a second or two of simulation).
TEST(GemmSelect, AutotuneSimulatesTheBestThreeAndKeepsTheFastest) {
  auto hw = machine("h200-sxm.yaml");
  const auto one = analytic::select_gemm(*hw, 256, 512, 512, "bf16", false, false);
  EXPECT_EQ(one.pick, 0u);
  size_t sims = 0;
  for (const auto& x : one.candidates) sims += x.simulated;
  EXPECT_EQ(sims, 1u);
  EXPECT_GT(one.timing.time_us, 0);
  EXPECT_EQ(one.timing.time_us, one.candidates[0].timing.time_us);

  const auto at = analytic::select_gemm(*hw, 256, 512, 512, "bf16", true, false);
  sims = 0;
  for (const auto& x : at.candidates)
    if (x.simulated) {
      ++sims;
      EXPECT_GE(x.timing.time_us, at.timing.time_us);
    }
  EXPECT_EQ(sims, std::min<size_t>(3, at.candidates.size()));
  EXPECT_TRUE(at.candidates[at.pick].simulated);
  EXPECT_NE(at.reason.find("autotune"), std::string::npos);
}

// On Hopper, cuBLAS runs aligned GEMMs on its TMA + wgmma kernels (nvjet_sm90_*: warp-specialized,
// persistent, clusters; validation/data/library/h100/b45/kernels_picked.csv) and sends a leading dimension that
// breaks TMA's 16-byte rows to its align1 mma.sync kernels; on Ampere there is no wgmma at all.
TEST(GemmSelect, OnHopperAnAlignedGemmRunsTheWarpSpecializedTmaWgmmaKernel) {
  const auto c = rank("h100-sxm.yaml", 4096, 4096, 4096);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0].plan.schedule, GemmSchedule::kWarpSpecialized) << c[0].why;
  EXPECT_EQ(analytic::gemm_kernel_file(c[0].plan), "gemm_wgmma.kir");
  // scored at the wgmma rate: its compute term is below every mma.sync candidate's of the same tile
  for (const auto& x : c) {
    if (x.plan.schedule == GemmSchedule::kDataParallel && x.plan.tile.str() == c[0].plan.tile.str()) {
      EXPECT_LT(c[0].compute_us, x.compute_us);
    }
  }
}

TEST(GemmSelect, ALeadingDimensionThatBreaksTmasSixteenByteRowsFallsBackToMmaSync) {
  for (int64_t n : {4095, 2049, 1796}) {  // N and K: odd, odd, a multiple of 4 but not of 8
    const auto c = rank("h100-sxm.yaml", n, n, n);
    ASSERT_FALSE(c.empty());
    for (const auto& x : c) EXPECT_NE(x.plan.schedule, GemmSchedule::kWarpSpecialized) << n;
    EXPECT_LT(c[0].plan.vector_bytes, 16) << n;
  }
  // M is no leading dimension (row-major C and A rows are K long): an odd M keeps TMA
  EXPECT_EQ(rank("h100-sxm.yaml", 4095, 4096, 4096)[0].plan.schedule, GemmSchedule::kWarpSpecialized);
}

// fp8 on Hopper: cuBLAS runs e4m3 GEMMs on wgmma (K-major B, 16-byte rows of 16 elements); the
// ranking offers the warp-specialized kernel at the e4m3 wgmma rate, twice bf16's, with BK = 128
// (128-byte rows), and refuses it where K is not a multiple of 16 elements.
TEST(GemmSelect, OnHopperAnFp8GemmRunsTheWgmmaKernelAtTwiceTheBf16Rate) {
  const auto f8 = rank("h100-sxm.yaml", 4096, 4096, 4096, "e4m3");
  const auto b16 = rank("h100-sxm.yaml", 4096, 4096, 4096, "bf16");
  ASSERT_FALSE(f8.empty());
  EXPECT_EQ(f8[0].plan.schedule, GemmSchedule::kWarpSpecialized) << f8[0].why;
  EXPECT_EQ(f8[0].plan.tile.bk, 128);
  for (const auto& x : b16) {
    if (x.plan.schedule == GemmSchedule::kWarpSpecialized && x.plan.tile_name() == f8[0].plan.tile_name()) {
      EXPECT_NEAR(f8[0].compute_us / x.compute_us, 0.5, 0.01);
    }
  }
  for (const auto& x : rank("h100-sxm.yaml", 4096, 4096, 4104, "e4m3"))  // K = 4104: 8 but not 16
    EXPECT_NE(x.plan.schedule, GemmSchedule::kWarpSpecialized);
  EXPECT_THROW(analytic::plan_gemm(*machine("h100-sxm.yaml"), 4096, 4096, 4104, analytic::gemm_wgmma_menu()[0],
                                   GemmSchedule::kWarpSpecialized, 0, "e4m3"),
               InputError);
}

TEST(GemmSelect, AnAmpereMachineHasNoWarpSpecializedCandidate) {
  for (const auto& x : rank("a100-40gb.yaml", 4096, 4096, 4096))
    EXPECT_NE(x.plan.schedule, GemmSchedule::kWarpSpecialized);
  const auto hw = machine("a100-40gb.yaml");
  EXPECT_THROW(
      analytic::plan_gemm(*hw, 4096, 4096, 4096, analytic::gemm_wgmma_menu()[0], GemmSchedule::kWarpSpecialized),
      InputError);
}

// A cluster of two CTAs reads each B box once through the L2 and multicasts it: per tile of BM x BN,
// (BM + BN / 2) x K elements instead of (BM + BN) x K.
TEST(GemmSelect, AClusterOfTwoChargesTheL2HalfOfTheSharedOperand) {
  const auto hw = machine("h100-sxm.yaml");
  analytic::GemmTile c1, c2;
  for (const auto& t : analytic::gemm_wgmma_menu()) {
    if (t.str() != "128x256") continue;
    (t.cluster == 1 ? c1 : c2) = t;
  }
  double l2_1 = 0, l2_2 = 0;
  for (const auto& x : rank("h100-sxm.yaml", 8192, 8192, 8192)) {
    if (x.plan.schedule != GemmSchedule::kWarpSpecialized || x.plan.tile.str() != "128x256") continue;
    (x.plan.tile.cluster == 1 ? l2_1 : l2_2) = x.l2_us;
  }
  ASSERT_GT(l2_1, 0);
  ASSERT_GT(l2_2, 0);
  EXPECT_NEAR(l2_2 / l2_1, (128.0 + 128.0) / (128.0 + 256.0), 0.02);
  (void)hw;
}

}  // namespace gemm_select_test
