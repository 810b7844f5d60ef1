// Sampled simulation (models/gpu/sampler.hpp) against the exact run of the same launch: every
// family the issue names, at a size where sampling engages (several turnovers of CTAs or a loop of
// at least 16 iterations), on an A100 cut to 4 SMs and a 1 MB L2 in 8 slices (kSmall) so that the
// exact run stays short. Cycles and DRAM bytes must agree within 2%, and sampling must have skipped work.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_test_util.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "models/analytic/gemm_plan.hpp"
#include "models/analytic/workload_run.hpp"

namespace gtsim::gpu::testing {
namespace {

struct Pair {
  KernelResult sampled, exact;
};

const std::vector<std::string> kSmall = {"sm.count=4", "l2.size_bytes=1048576", "l2.slices=8"};

Pair run_both(const std::string& kernel, const ir::ParamValues& params, const std::string& hw = "a100-40gb",
              const std::vector<std::string>& sets = kSmall) {
  auto prog = lib_kernel(kernel, params);
  Pair p;
  for (bool exact : {false, true}) {
    auto root = load_hw(hw, sets);
    GpuModel m(*root);
    SamplingPolicy pol;
    pol.exact = exact;
    m.set_sampling(pol);
    (exact ? p.exact : p.sampled) = m.run(*prog);
  }
  return p;
}

double rel(double a, double b) { return b == 0 ? (a == 0 ? 0 : 1) : std::abs(a - b) / b; }

void expect_close(const Pair& p, double max_fraction_simulated = 0.8) {
  const auto& s = p.sampled;
  const auto& e = p.exact;
  EXPECT_TRUE(e.sampling.exact);
  EXPECT_FALSE(s.sampling.exact);
  EXPECT_LT(s.sampling.fraction_simulated, max_fraction_simulated) << "sampling did not engage";
  EXPECT_LE(rel(double(s.cycles), double(e.cycles)), 0.02) << "cycles " << s.cycles << " vs exact " << e.cycles;
  double sd = double(s.dram_read_bytes + s.dram_write_bytes), ed = double(e.dram_read_bytes + e.dram_write_bytes);
  EXPECT_LE(rel(sd, ed), 0.02) << "DRAM bytes " << sd << " vs exact " << ed;
  EXPECT_LE(rel(double(s.warp_instructions), double(e.warp_instructions)), 0.02);
  EXPECT_LE(rel(double(s.flops), double(e.flops)), 0.02);
  // the error the run estimates for itself is an estimate, not a bound; it must be reported
  EXPECT_GE(s.sampling.estimated_error_pct, 0.0);
}

TEST(SampledMatchesExact, TiledGemmSteadyKLoopAndWaves) {
  expect_close(run_both("gemm_tiled", {{"M", 1024}, {"N", 1024}, {"K", 1024}}));
}

// gemm_fp32: CTAs that share A and B lines fetch them in turns, so one window's DRAM bytes per
// iteration swing by 10-30% long after the timing has settled; they converge as a mean over the
// steady period (the windows since the timing last disagreed). The default L2 holds the operands, as
// in the launches the issue names (a 1 MB L2 fills inside the skip, which stops it).
TEST(SampledMatchesExact, Fp32GemmSharedLinesSettleAsASteadyPeriodMean) {
  expect_close(run_both("gemm_fp32", {{"M", 256}, {"N", 256}, {"K", 1024}}, "a100-40gb", {"sm.count=4"}), 0.5);
}

// One CTA of 32 warps whose loop is issue-bound: the greedy scheduler runs the oldest warps and
// starves the youngest (they have not started the loop when the first ones are half way), so the
// CTA's progress is its warps' mean, not its least advanced warp's.
TEST(SampledMatchesExact, OneCtaWithStarvedWarpsSkipsOnItsMeanProgress) {
  expect_close(run_both("fixed_work", {{"ctas", 1}, {"work", 4096}}), 0.2);
}

// Not here yet (docs/sampling.md, "Where sampling does not engage"): the persistent GEMM's tile loop
// (4 CTAs, too few iterations per CTA) and flash attention at these sizes (16-32 KV iterations, CTAs
// in different phases) run exactly; their sampled runs equal the exact ones.

TEST(SampledMatchesExact, StreamCopyTurnovers) { expect_close(run_both("stream_copy", {{"n", 1 << 22}})); }

// With the far partition's lines copied near their readers (l2.near_copies) the small L2's sets hold
// a pattern that repeats over several turnovers: single turnovers differ by 2-3%, spans of them agree.
TEST(SampledMatchesExact, StreamCopyWithNearCopiesSettlesOverSpansOfTurnovers) {
  std::vector<std::string> sets = kSmall;
  sets.push_back("l2.near_copies=true");
  expect_close(run_both("stream_copy", {{"n", 1 << 22}}, "a100-40gb", sets));
}

TEST(SampledMatchesExact, StridedCopyTurnovers) {
  expect_close(run_both("strided_copy", {{"n", 1 << 20}, {"stride", 8}}));
}

TEST(SampledMatchesExact, SoftmaxRowsTurnovers) {
  expect_close(run_both("softmax_rows", {{"rows", 1024}, {"T", 1024}}));
}

TEST(SampledMatchesExact, DivergentPathsLoop) { expect_close(run_both("divergence", {{"ways", 4}, {"work", 512}})); }

TEST(SampledMatchesExact, BankConflictsLoop) {
  expect_close(run_both("bank_conflicts", {{"stride", 4}, {"iters", 512}}));
}

// The library's 256x128 GEMM tile over three turnovers of CTAs (36 tiles on 12 SMs, K = 3072: 96
// k-steps). The loop epoch of the first turnover skips into the second (each slot owes what its CTA had
// no room for, paid by its next CTA), and a payment warms at once the lines its skipped time would
// have read over that span: the B slices the first turnover's last iterations were about to read. The
// first turnover then hits where it would have missed, and the second's own mix has B as hits: before
// the payments counted the DRAM reads that warming found missing, DRAM reads came out 3.9% short of
// exact here (3.2% on 16 SMs, 2.8% for 3072^3 on the whole A100).
TEST(SampledMatchesExact, DebtsPaidByTheNextTurnoverCountTheReadsTheirWarmingFetched) {
  auto hw = load_hw("a100-40gb", {"sm.count=12"});
  auto p =
      analytic::plan_gemm(*hw, 768, 1536, 3072, analytic::parse_tile("256x128"), analytic::GemmSchedule::kDataParallel);
  ASSERT_EQ(p.tiles, 36);
  auto s = analytic::simulate_gemm(*hw, p, false), e = analytic::simulate_gemm(*hw, p, true);
  EXPECT_LT(s.fraction_simulated, 0.6) << "sampling did not engage";
  EXPECT_LE(rel(s.time_us, e.time_us), 0.02) << s.time_us << " vs exact " << e.time_us;
  EXPECT_LE(rel(double(s.dram_bytes), double(e.dram_bytes)), 0.02) << s.dram_bytes << " vs exact " << e.dram_bytes;
}

// Two CTAs per SM at different speeds: the greedy scheduler runs one ahead (it fetches the A and B
// slices first, the other then hits on them), so the window's DRAM bytes per iteration are the mean of
// a fast CTA that misses and a slow one that hits, while a skip of equal time gives the slow CTAs a
// larger share of the skipped iterations. Charged at the mean, DRAM reads came out 8.4% above exact,
// and FLOPs 4.0% (the debts' mix: the payers' last iterations issue no loads); now the skipped reads
// are those their warming fetched, and the SMs' counters an iteration's.
TEST(SampledMatchesExact, CtasOfOneSmAtDifferentSpeedsAreChargedTheirOwnReads) {
  expect_close(run_both("gemm_tiled", {{"M", 512}, {"N", 1408}, {"K", 3072}}, "a100-40gb", {"sm.count=8"}), 0.9);
}

// Naive attention as a workload: three kernels on one machine, the L2 carried between them.
TEST(SampledMatchesExact, NaiveAttentionWorkload) {
  auto hw = load_hw("a100-40gb", kSmall);
  auto w = wl::Workload::load_file(source_path("kernels_ir/workloads/attention_naive.yaml"),
                                   {{"B", 1}, {"H", 2}, {"T", 512}, {"d", 64}});
  analytic::WorkloadRunOptions o;
  auto sampled = analytic::run_workload(*hw, w, o);
  o.exact = true;
  auto exact = analytic::run_workload(*hw, w, o);
  EXPECT_LE(rel(sampled.total_us, exact.total_us), 0.02) << sampled.total_us << " vs " << exact.total_us;
  EXPECT_LE(rel(double(sampled.dram_bytes), double(exact.dram_bytes)), 0.02)
      << sampled.dram_bytes << " vs " << exact.dram_bytes;
  // which kernels sample is not asserted: at T = 512 on 4 SMs the softmax samples (turnovers of rows)
  // and the two GEMMs (two K iterations each at d = 64) run exactly
}

// Stores into an L2 full of dirty lines (the same launch ran just before): every store evicts a
// dirty line, the write-backs queue up in the memory system faster than the HBM drains them, and the
// launch ends when the HBM has written them all. The turnovers of CTAs look steady (same span, same
// DRAM bytes arriving per turnover) while the queue grows, so a skip taken there reported a quarter
// of the time and half of the bytes (docs/sampling.md). Sampled must match exact, skipped or not.
TEST(SampledMatchesExact, StoresQueuedBehindTheHbmAreNoSteadyState) {
  Pair p;
  for (bool exact : {false, true}) {
    auto root = load_hw("a100-40gb", kSmall);
    GpuModel m(*root);
    SamplingPolicy pol;
    pol.exact = exact;
    m.set_sampling(pol);
    auto prog = lib_kernel("store_tile", {{"BH", 4}, {"T", 2048}, {"variant", 1}});
    m.run(*prog);  // leaves the L2 full of its dirty lines
    (exact ? p.exact : p.sampled) = m.run(*prog);
  }
  EXPECT_LE(rel(double(p.sampled.cycles), double(p.exact.cycles)), 0.02)
      << "cycles " << p.sampled.cycles << " vs exact " << p.exact.cycles;
  EXPECT_LE(rel(double(p.sampled.dram_write_bytes), double(p.exact.dram_write_bytes)), 0.02)
      << "DRAM written " << p.sampled.dram_write_bytes << " vs exact " << p.exact.dram_write_bytes;
}

// A launch too small to reach a steady state runs exactly, and says so.
TEST(SampledMatchesExact, SmallLaunchRunsInFull) {
  auto p = run_both("gemm_tiled", {{"M", 128}, {"N", 128}, {"K", 128}});
  EXPECT_EQ(p.sampled.cycles, p.exact.cycles);
  EXPECT_DOUBLE_EQ(p.sampled.sampling.fraction_simulated, 1.0);
}

// The same launch sampled twice gives the same figures (the stopping rule is deterministic).
TEST(SampledMatchesExact, StoppingRuleIsDeterministic) {
  auto a = run_both("strided_copy", {{"n", 1 << 20}, {"stride", 8}});
  auto b = run_both("strided_copy", {{"n", 1 << 20}, {"stride", 8}});
  EXPECT_LT(a.sampled.sampling.fraction_simulated, 1.0);
  EXPECT_EQ(a.sampled.cycles, b.sampled.cycles);
  EXPECT_EQ(a.sampled.dram_read_bytes, b.sampled.dram_read_bytes);
}

}  // namespace
}  // namespace gtsim::gpu::testing
