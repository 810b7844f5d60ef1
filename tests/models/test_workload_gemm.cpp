// GEMM waves (P10), alignment (P9) and the roofline microbenchmarks (P2) on the simulated H200.
// The GEMM sweeps are the expensive part of the suite: a few points each, sampled per wave.
#include <gtest/gtest.h>

#include "models/analytic/gemm_plan.hpp"
#include "models/analytic/gemm_select.hpp"
#include "models/analytic/roofline.hpp"
#include "models/analytic/waves.hpp"
#include "models/analytic/workload_run.hpp"
#include "models/gpu/specs.hpp"
#include "sim/config.hpp"
#include "tests/test_paths.hpp"

using namespace gtsim;

namespace {
using gtsim::testing::src;
std::shared_ptr<ConfigNode> h200() { return ConfigNode::load_file(src("hw_configs/h200-sxm.yaml")); }
}  // namespace

// NVIDIA's Matrix Multiplication Background example: M = 2304, N a multiple of 128. With 256x128
// tiles (one CTA per SM, 132 per wave) the tile count is 9 N / 128: 126 at N = 1792 (one wave), 135
// at N = 1920 (two waves, the second holding 3 tiles): throughput dips exactly there. The example's
// K = 4096 is cut to 1024 (32 k-steps a tile): the dip is the tile count's, whatever K.
TEST(WorkloadGemm, H200NSweepDipsWhereTilesPassTheWaveSize_Slow) {
  auto hw = h200();
  auto tile = analytic::parse_tile("256x128");
  std::vector<double> tf;
  std::vector<int64_t> waves, per_cta;
  for (int64_t n : {1664, 1792, 1920}) {
    auto p = analytic::plan_gemm(*hw, 2304, n, 1024, tile, analytic::GemmSchedule::kDataParallel);
    waves.push_back(p.waves);
    tf.push_back(analytic::simulate_gemm(*hw, p).tflops);
    auto q = analytic::plan_gemm(*hw, 2304, n, 1024, tile, analytic::GemmSchedule::kPersistent);
    per_cta.push_back(q.tiles_per_cta_max);
  }
  EXPECT_EQ(waves, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(per_cta, (std::vector<int64_t>{1, 1, 2}));      // persistent: tiles per CTA steps instead
  EXPECT_GE(tf[1], 0.95 * tf[0]) << tf[0] << " " << tf[1];  // no dip while the wave fills
  EXPECT_LT(tf[2], 0.75 * tf[1]) << tf[1] << " " << tf[2];  // the dip
}

// The lecture's alignment curve: square bf16 GEMMs near 1024; the largest power of two dividing n
// sets the global vector width (16 / 8 / 4 / 2 bytes), and throughput orders by it.
TEST(WorkloadGemm, AlignmentOrdersThroughputByPowerOfTwoDividingN_Slow) {
  auto hw = h200();
  auto tile = analytic::parse_tile("128x128");
  auto tflops = [&](int64_t n) {
    auto p = analytic::plan_gemm(*hw, n, n, n, tile, analytic::GemmSchedule::kDataParallel);
    return analytic::simulate_gemm(*hw, p).tflops;
  };
  // Means per class (single points carry a few % of L2/partition noise: 1032 alone sits below 1028).
  double odd = tflops(1025), two = tflops(1026), four = (tflops(1028) + tflops(1036)) / 2,
         eight = (tflops(1032) + tflops(1040) + tflops(1048)) / 3;
  EXPECT_LT(odd, two);
  EXPECT_LT(two, four);
  EXPECT_LT(four, eight) << odd << " " << two << " " << four << " " << eight;
}

TEST(WorkloadGemm, VectorWidthFollowsTheLargestPowerOfTwo) {
  EXPECT_EQ(analytic::vector_elems(1031), 1);
  EXPECT_EQ(analytic::vector_elems(1030), 2);
  EXPECT_EQ(analytic::vector_elems(1028), 4);
  EXPECT_EQ(analytic::vector_elems(1032), 8);
  EXPECT_EQ(analytic::vector_elems(1040), 8);
}

// P2: the roofline from the model's own microbenchmarks sits near the config's datasheet one.
TEST(WorkloadGemm, RooflineRidgeFromMicrobenchmarksNearConfigRidge) {
  auto hw = h200();
  double bw = analytic::attained_dram_bandwidth(*hw, int64_t(1) << 24);
  double cfg_bw = analytic::config_hbm_bytes_per_s(*hw);
  EXPECT_GT(bw, 0.6 * cfg_bw);
  EXPECT_LT(bw, 1.05 * cfg_bw);
  double bf16 = analytic::attained_peak_flops(*hw, ir::DType::kBf16, 64);
  double cfg = analytic::config_peak_flops(*hw, ir::DType::kBf16);
  EXPECT_GT(bf16, 0.7 * cfg);
  EXPECT_LT(bf16, 1.02 * cfg);
  double ridge = bf16 / bw;
  EXPECT_GT(ridge, 50.0);  // far right of any elementwise kernel (< 2 flop/B)
}

// Determinism: roofline runs its microbenchmarks (the copy, a peak per dtype) on several threads at
// once; each is its own machine and lands by index, so the report is the same on one thread or many.
TEST(WorkloadGemm, RooflineMicrobenchmarksOnSeveralThreadsGiveTheSameReport) {
  auto hw = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"), {"sm.count=4"});
  analytic::RooflineOptions o;
  o.stream_elements = int64_t(1) << 18;
  o.mma_iterations = 8;
  o.ffma_iterations = 8;
  o.threads = 1;
  auto one = analytic::roofline(*hw, nullptr, o);
  o.threads = 3;
  auto three = analytic::roofline(*hw, nullptr, o);
  EXPECT_EQ(one.json.dump(), three.json.dump());
  EXPECT_EQ(one.text, three.text);
  ASSERT_EQ(three.ridges.size(), 5u);
  for (const auto& r : three.ridges) EXPECT_GT(r.peak_flops_attained, 0) << r.dtype;
}

// P4: the same GEMM on the CUDA cores (gemm_fp32.kir, FFMA) and on the tensor cores (bf16 mma.sync).
// The fp32 run cannot beat the config's FFMA peak, and the tensor-core run is several times faster:
// at least a quarter of the ratio of the two peaks (the bf16 kernel reaches well over a quarter of
// its roof at one full wave, the fp32 one at most all of its own). M = N = 2048 fills one wave of
// either kernel; K = 256 (32 k-steps of the SGEMM, 17M FFMA warp instructions) keeps the fp32 run
// near half a minute (K = 2048 takes ~3 min of one core).
TEST(WorkloadGemm, Fp32CudaCoreGemmAtMostFfmaPeakAndSeveralTimesSlowerThanBf16Mma_Slow) {
  auto hw = h200();
  const int64_t n = 2048, k = 256;
  auto pf = analytic::plan_gemm(*hw, n, n, k, analytic::parse_tile("128x128", "f32"),
                                analytic::GemmSchedule::kDataParallel, 0, "f32");
  EXPECT_EQ(pf.waves, 1);  // 256 tiles, two CTAs per SM (121 registers x 256 threads)
  auto tf = analytic::simulate_gemm(*hw, pf);
  auto pb = analytic::plan_gemm(*hw, n, n, k, analytic::parse_tile("256x128"), analytic::GemmSchedule::kDataParallel);
  auto tb = analytic::simulate_gemm(*hw, pb);
  const double peak_f32 = analytic::config_peak_flops(*hw, ir::DType::kF32);
  const double peak_bf16 = analytic::config_peak_flops(*hw, ir::DType::kBf16);
  const double flops = 2.0 * n * n * k;
  EXPECT_LE(flops / (tf.time_us * 1e-6), 1.001 * peak_f32) << tf.tflops;
  EXPECT_GE(flops / (tf.time_us * 1e-6), 0.25 * peak_f32) << tf.tflops;  // a real SGEMM, not a stall
  EXPECT_GE(tf.time_us / tb.time_us, 0.25 * peak_bf16 / peak_f32) << tf.time_us << " vs " << tb.time_us;
}

// Split-K where data-parallel leaves the GPU mostly idle: M = N = 512 is 8 tiles of 256x128 on 132
// SMs; K = 16384 long. Splitting K over the idle SMs wins by more than a third of the idle ratio even
// after the workspace round trip; and the split beats the best data-parallel tile too.
TEST(WorkloadGemm, SplitKBeatsDataParallelForFewTilesAndLongK_Slow) {
  auto hw = h200();
  auto tile = analytic::parse_tile("256x128");
  auto dp = analytic::plan_gemm(*hw, 512, 512, 16384, tile, analytic::GemmSchedule::kDataParallel);
  auto sk = analytic::plan_gemm(*hw, 512, 512, 16384, tile, analytic::GemmSchedule::kSplitK);
  ASSERT_EQ(dp.tiles, 8);
  EXPECT_GT(sk.ksplit, 1);
  EXPECT_LE(sk.grid, sk.wave_size);  // the split fills (at most) one wave
  double t_dp = analytic::simulate_gemm(*hw, dp).time_us;
  auto tsk = analytic::simulate_gemm(*hw, sk);
  EXPECT_GT(tsk.reduce_us, 0.0);
  const double busy = double(sk.grid) / double(dp.grid);  // SMs the split keeps busy, per data-parallel one
  EXPECT_LT(tsk.time_us, t_dp / (busy / 3)) << tsk.time_us << " vs " << t_dp << " (ksplit " << sk.ksplit << ")";
  auto dp64 =
      analytic::plan_gemm(*hw, 512, 512, 16384, analytic::parse_tile("64x64"), analytic::GemmSchedule::kDataParallel);
  EXPECT_LT(tsk.time_us, analytic::simulate_gemm(*hw, dp64).time_us);
}

// ... and where it does not help: tiles that already fill a wave (2048 x 2048: 128 tiles of 132 SMs;
// K = 1024, 32 k-steps a tile). The planner keeps one slice (the data-parallel kernel, no reduction);
// forcing two slices costs a second wave of half-K items plus the workspace round trip, and is no faster.
TEST(WorkloadGemm, SplitKDoesNotHelpWhereTilesFillAWave_Slow) {
  auto hw = h200();
  auto tile = analytic::parse_tile("256x128");
  auto sk = analytic::plan_gemm(*hw, 2048, 2048, 1024, tile, analytic::GemmSchedule::kSplitK);
  EXPECT_EQ(sk.ksplit, 1);
  auto dp = analytic::plan_gemm(*hw, 2048, 2048, 1024, tile, analytic::GemmSchedule::kDataParallel);
  auto sk2 = analytic::plan_gemm(*hw, 2048, 2048, 1024, tile, analytic::GemmSchedule::kSplitK, 2);
  EXPECT_EQ(sk2.ksplit, 2);
  double t_dp = analytic::simulate_gemm(*hw, dp).time_us, t_sk2 = analytic::simulate_gemm(*hw, sk2).time_us;
  EXPECT_GE(t_sk2, t_dp) << t_sk2 << " vs " << t_dp;
}

// A workload matmul runs the kernel of its dtype, as `gtsim waves --dtype` does: f32 operands on the
// CUDA cores (gemm_fp32.kir, FFMA: the H200 config's f32 peak is about 1/15 of its bf16 tensor-core
// peak), bf16 on the tensor cores. Before, every workload matmul ran the bf16 kernel whatever its dtype.
TEST(WorkloadGemm, AnF32MatmulRunsOnTheCudaCoresSeveralTimesSlowerThanBf16) {
  auto hw = h200();
  auto time_of = [&](const std::string& dt) {
    auto w = wl::Workload::load_string("name: mm\ntensors:\n  a: {dtype: " + dt +
                                       ", shape: [512, 512]}\n  b: {dtype: " + dt +
                                       ", shape: [512, 512]}\nops:\n  - {name: mm, op: matmul, a: a, b: b, out: c}\n");
    return analytic::run_workload(*hw, w, analytic::WorkloadRunOptions{}).total_us;
  };
  const double f32 = time_of("f32"), bf16 = time_of("bf16");
  EXPECT_GT(f32 / bf16, 3.0) << f32 << " vs " << bf16 << " us";
}

// `waves` advice that keeps the problem: 512x512x4096 in 256x128 tiles is 8 tiles for 132 SMs. Splitting
// K fills the idle SMs (the reduction launch is small beside it) and smaller tiles spread the work;
// both are offered without padding (padding_pct 0), ranked by their simulated time, and split-K, the
// fastest, beats the chosen tile by more than 2x.
TEST(WavesAdvice, AGemmOfAFewTilesIsOfferedSplitKAndSmallerTilesRankedByTime) {
  auto hw = h200();
  analytic::WavesRequest r;
  r.M = 512, r.N = 512, r.K = 4096;
  r.tile = "256x128";
  auto rep = analytic::waves(*hw, r);
  const auto& s = rep.json["suggestions"];
  ASSERT_GE(s.size(), 2u) << rep.text;
  EXPECT_EQ(s[0]["kind"], "split-k") << rep.text;
  bool tile = false;
  for (size_t i = 0; i < s.size(); ++i) {
    tile = tile || s[i]["kind"] == "tile";
    EXPECT_EQ(s[i]["gemm"], "512x512x4096") << rep.text;
    EXPECT_NEAR(s[i]["padding_pct"].get<double>(), 0.0, 1e-9);
    if (i > 0) {
      EXPECT_LE(s[i - 1]["time_us"].get<double>(), s[i]["time_us"].get<double>()) << rep.text;
    }
  }
  EXPECT_TRUE(tile) << rep.text;
  EXPECT_GT(rep.json["time_us"].get<double>() / s[0]["time_us"].get<double>(), 2.0) << rep.text;
}

// A tile is offered only where the closed form sees at least 10% less work on the busiest SM: 4096^3
// on the A100 in 256x128 tiles (512 tiles, 108 SMs: 5 per SM) has no such tile, and fills its waves
// (no split-K).
TEST(WavesAdvice, AFullGemmWithoutAQuantizationLossIsOfferedNoOtherTileOrSplit) {
  auto hw = ConfigNode::load_file(src("hw_configs/a100-40gb.yaml"));
  analytic::WavesRequest r;
  r.M = r.N = r.K = 4096;
  r.tile = "256x128";
  r.simulate = false;
  auto rep = analytic::waves(*hw, r);
  EXPECT_EQ(rep.json["suggestions"].size(), 0u) << rep.text;
}

namespace {
// The A100 cut to 16 SMs: a 1024^3 bf16 GEMM in 256x128 tiles is 32 tiles, two waves, in about a second.
std::shared_ptr<ConfigNode> a100_16sms(uint64_t l2_bytes = 0) {
  std::vector<std::string> sets = {"sm.count=16"};
  if (l2_bytes) sets.push_back("l2.size_bytes=" + std::to_string(l2_bytes));
  return ConfigNode::load_file(src("hw_configs/a100-40gb.yaml"), sets);
}
analytic::WorkloadReport gemm_workload(const ConfigNode& hw, int64_t n, bool exact = false,
                                       const std::string& tile = "") {
  auto w = wl::Workload::load_string(
      "name: mm\nparams: {n: 1024}\ntensors:\n  a: {dtype: bf16, shape: [n, n]}\n  b: {dtype: bf16, shape: [n, n]}\n"
      "ops:\n  - {name: mm, op: matmul, a: a, b: b, out: c}\n",
      "mm.yaml", {{"n", n}});
  analytic::WorkloadRunOptions o;
  o.exact = exact;
  o.gemm_tile = tile;
  return analytic::run_workload(hw, w, o);
}
}  // namespace

// One number for one question: a workload's matmul runs the kernel `gtsim gemm` picks (the library's
// choice), as `gtsim waves` does without --tile and --schedule, and with `--tile` the mma.sync tile
// `gtsim waves --tile` runs, on the same engine, so each pair
// gives the same time and DRAM bytes: within 1% exact; by default (sampled where sampling engages, each
// at its own addresses) the time within 1% and the bytes within 6%.
TEST(OneStory, WavesGemmAndWorkloadGiveOneGemmTheSameTimeAndBytes) {
  for (const char* file : {"a100", "h100"}) {
    auto hw = std::string(file) == "a100" ? a100_16sms() : ConfigNode::load_file(src("hw_configs/h100-sxm.yaml"));
    for (bool exact : {true, false}) {
      analytic::WavesRequest r;
      r.M = r.N = r.K = 1024;
      r.suggestions = false;
      r.exact = exact;
      r.tile = "128x128";
      auto w = analytic::waves(*hw, r);
      // a workload's kernels run back to back in a stream: each pays the stream's gap besides its launch
      const double gap = gpu::GpuSpecs::parse(*hw).launch.stream_gap_us;
      auto k = gemm_workload(*hw, 1024, exact, "128x128");
      ASSERT_EQ(k.kernels.size(), 1u);
      EXPECT_NEAR(w.json["time_us"].get<double>() / (k.kernels[0].time_us - gap), 1.0, 0.01)
          << file << w.text << k.text;
      EXPECT_NEAR(double(w.json["dram_bytes"].get<uint64_t>()) /
                      double(k.kernels[0].dram_read_bytes + k.kernels[0].dram_write_bytes),
                  1.0, exact ? 0.01 : 0.06)
          << file << (exact ? " exact " : " sampled ") << w.text << k.text;
      const auto g = analytic::select_gemm(*hw, 1024, 1024, 1024, "bf16", false, exact);
      const auto lib = gemm_workload(*hw, 1024, exact);
      ASSERT_EQ(lib.kernels.size(), 1u);
      EXPECT_NE(lib.kernels[0].kernel.find(analytic::gemm_kernel_file(g.plan)), std::string::npos)
          << lib.kernels[0].kernel;
      EXPECT_NEAR(g.timing.time_us / (lib.kernels[0].time_us - gap), 1.0, 0.01) << file << lib.text;
      r.tile.clear();  // waves with neither tile nor schedule: the same pick as gemm's
      auto wl = analytic::waves(*hw, r);
      EXPECT_EQ(wl.json["kernel"].get<std::string>(), analytic::gemm_kernel_file(g.plan)) << wl.text;
      EXPECT_NEAR(wl.json["time_us"].get<double>() / g.timing.time_us, 1.0, 1e-9) << wl.text;
      EXPECT_NEAR(
          double(g.timing.dram_bytes) / double(lib.kernels[0].dram_read_bytes + lib.kernels[0].dram_write_bytes), 1.0,
          exact ? 0.01 : 0.06)
          << file << lib.text;
    }
  }
}

// The L2's size changes a GEMM's DRAM reads where it changes the hardware's: A and B (2 MiB each) do
// not fit a 2 MiB L2, so the second wave reads the panels the first read again; a 4 MiB L2 holds them
// (the reads fall to about the compulsory 4 MiB), and an 8 MiB one has little left to gain.
TEST(OneStory, DoublingTheL2CutsAGemmsDramReadsUntilItsOperandsFit) {
  auto reads = [](uint64_t l2) {
    return double(gemm_workload(*a100_16sms(l2), 1024, false, "128x128").kernels[0].dram_read_bytes);
  };
  const double small = reads(2u << 20), fits = reads(4u << 20), big = reads(8u << 20);
  EXPECT_LT(fits / small, 0.92) << small << " -> " << fits << " bytes";
  EXPECT_GT(big / fits, 0.9) << fits << " -> " << big << " bytes";
  EXPECT_NEAR(big / (4.0 * 1024 * 1024), 1.0, 0.02) << big << " bytes";
}

// Sampling a GEMM of two waves in 256x128 tiles (one CTA per SM): the first wave's loop is skipped,
// and what its CTAs cannot skip their slots' next CTAs (the second wave) skip. The second wave finds
// in the L2 the panels the first read: sampled DRAM reads stay near the exact run's (the skipped
// iterations warm the L2 by their byte ranges, and the second wave's skips are charged at its own
// rate, not the first wave's). Before: +28% (every skipped iteration charged as a first-wave miss, and
// no line warmed, as the rows' 64-byte k-slices fell on one line or two by turns).
TEST(SampledMatchesExact, AGemmsSecondWaveFindsTheFirstWavesPanelsInTheL2) {
  auto hw = a100_16sms(8u << 20);
  auto run = [&](bool exact) {
    auto w = wl::Workload::load_string(
        "name: mm\ntensors:\n  a: {dtype: bf16, shape: [1024, 1024]}\n  b: {dtype: bf16, shape: [1024, 1024]}\n"
        "ops:\n  - {name: mm, op: matmul, a: a, b: b, out: c}\n");
    analytic::WorkloadRunOptions o;
    o.exact = exact;
    o.gemm_tile = "256x128";
    return analytic::run_workload(*hw, w, o).kernels.at(0);
  };
  auto sampled = run(false), exact = run(true);
  EXPECT_LT(sampled.fraction_simulated, 0.9);
  EXPECT_NEAR(double(sampled.dram_read_bytes) / double(exact.dram_read_bytes), 1.0, 0.08)
      << sampled.dram_read_bytes << " sampled, " << exact.dram_read_bytes << " exact";
  EXPECT_NEAR(sampled.time_us / exact.time_us, 1.0, 0.06) << sampled.time_us << " vs " << exact.time_us << " us";
}

// The teaching GPU has 48 KB of shared memory per CTA: the menu's larger tiles (3 stages of 256x128
// need 87.5 KB) cannot launch there, so they are not offered, and asking for advice is no error.
TEST(WavesAdvice, ATileTheMachineCannotLaunchIsNotOffered) {
  auto hw = ConfigNode::load_file(src("hw_configs/teach-tiny.yaml"));
  analytic::WavesRequest r;
  r.M = r.N = 128, r.K = 64;
  r.tile = "64x64";
  analytic::WavesReport rep;
  ASSERT_NO_THROW(rep = analytic::waves(*hw, r));
  for (const auto& s : rep.json["suggestions"]) EXPECT_NE(s["tile"], "256x128") << rep.text;
}
