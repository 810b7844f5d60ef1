// Rules: in mxu.timing: textbook, with the whole temporal dim streamed per fold, the MXU's cycle
// count is SCALE-Sim v2's (scalesim/compute/systolic_compute_{ws,os,is}.py) for the three
// dataflows; an SRAM-to-array bandwidth stalls the array on the words it has to deliver; zero-size
// dimensions are refused. R x C array, GEMM (M x K) @ (K x N); Sr, Sc spatial, T temporal:
//   weight stationary (WS): Sr = K (rows), Sc = N (cols), T = M; per fold 2R + C + T - 2
//   input stationary  (IS): Sr = K (rows), Sc = M (cols), T = N; per fold 2R + C + T - 2
//   output stationary (OS): Sr = M (rows), Sc = N (cols), T = K; per fold  R + C + T - 2
//   folds = ceil(Sr / R) * ceil(Sc / C), back to back.
// OS has no preload of R cycles in SCALE-Sim v2's code (its operand demand matrices are T + R + C - 2
// lines per fold; the papers' closed form 2 S_R + S_C + T - 2 counts one). The papers: Samajdar et al.,
// arXiv:1811.02883, and ISPASS 2020.
//
// Final-cycle convention: gtsim reports a duration (cycles from the first operand entering the
// array to the last result leaving it). SCALE-Sim's COMPUTE_REPORT "Total Cycles" is the 0-based
// index of the last cycle (single_layer_sim: the service cycle of the last OFMAP demand line), so
// gtsim cycles = SCALE-Sim Total Cycles + 1.
#include <gtest/gtest.h>

#include "models/tpu/core_program.hpp"
#include "models/tpu/lowering.hpp"
#include "models/tpu/tpu_model.hpp"
#include "sim/error.hpp"
#include "tests/test_paths.hpp"

namespace gtsim::tpu {
namespace {

using gtsim::testing::cfg_path;

// One MXU of R x C at 1 GHz (one cycle = 1000 ps exactly), memory, DMA, dispatch, issue and the
// vector unit made free, VMEM large enough that the whole GEMM is one block: only the MXU is timed.
TpuConfig textbook(uint32_t R, uint32_t C, const std::string& dataflow, std::vector<std::string> extra = {}) {
  std::vector<std::string> o = {"mxu.timing=textbook",
                                "mxu.dataflow=" + dataflow,
                                "mxu.count=1",
                                "mxu.rows=" + std::to_string(R),
                                "mxu.cols=" + std::to_string(C),
                                "clocks.core_mhz=1000",
                                "chip.peak_bf16_tflops=" + std::to_string(2.0 * R * C * 1e9 / 1e12),
                                "hbm.bandwidth_gbps=1e12",
                                "hbm.latency_ns=0",
                                "dma.issue_cycles=0",
                                "scalar.issue_cycles=0",
                                "dispatch.overhead_us=0",
                                "vpu.alu_ops_per_cycle=1e6",
                                "vmem.bandwidth_gbps=1e12",
                                "vmem.capacity_mib=1e6"};
  o.insert(o.end(), extra.begin(), extra.end());
  return TpuConfig::load(cfg_path("tpu-v5e.yaml"), o);
}

uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// SCALE-Sim v2's cycle count, as a duration (its Total Cycles + 1).
uint64_t scalesim(const std::string& df, uint64_t M, uint64_t K, uint64_t N, uint64_t R, uint64_t C) {
  if (df == "weight_stationary") return cdiv(K, R) * cdiv(N, C) * (2 * R + C + M - 2);
  if (df == "input_stationary") return cdiv(K, R) * cdiv(M, C) * (2 * R + C + N - 2);
  return cdiv(M, R) * cdiv(N, C) * (R + C + K - 2);  // output_stationary
}

OpDesc matmul(uint64_t m, uint64_t k, uint64_t n) {
  OpDesc op;
  op.name = "mm";
  op.kind = OpKind::kMatmul;
  op.m = m, op.k = k, op.n = n;
  return op;
}

// The whole GEMM as one block (`--tiling MxKxN`): no dim is split by the grid.
RunResult run_whole(const TpuConfig& cfg, uint64_t m, uint64_t k, uint64_t n) {
  LowerOptions opt;
  opt.tiling = {m, k, n};
  auto progs = lower(matmul(m, k, n), cfg, opt);
  EXPECT_EQ(progs.size(), 1u);
  return TpuModel(cfg).run(progs[0]);
}

struct Shape {
  uint64_t M, K, N;
  uint32_t R, C;
};
// Including non-multiples of the array, small M, K or N, non-square arrays, tiles smaller than the array.
const Shape kShapes[] = {{4096, 4096, 4096, 256, 256}, {1000, 300, 700, 128, 128}, {8, 1024, 1024, 128, 128},
                         {1, 1, 1, 128, 128},          {64, 64, 64, 128, 128},     {129, 129, 129, 128, 128},
                         {1024, 1024, 1024, 128, 128}, {3025, 363, 96, 32, 32},    {512, 4096, 128, 128, 128},
                         {777, 555, 333, 128, 64},     {16, 8192, 256, 256, 256},  {4096, 128, 4096, 128, 128},
                         {200, 3000, 8, 64, 128},      {2048, 17, 2050, 256, 128}};

TEST(TpuDataflows, TextbookCyclesEqualScaleSimV2ForAllThreeDataflows) {
  for (const char* df : {"weight_stationary", "output_stationary", "input_stationary"})
    for (const Shape& s : kShapes) {
      TpuConfig cfg = textbook(s.R, s.C, df);
      RunResult r = run_whole(cfg, s.M, s.K, s.N);
      uint64_t want = scalesim(df, s.M, s.K, s.N, s.R, s.C);
      std::string what = std::string(df) + " " + std::to_string(s.M) + "x" + std::to_string(s.K) + "x" +
                         std::to_string(s.N) + " on " + std::to_string(s.R) + "x" + std::to_string(s.C);
      EXPECT_EQ(r.mxu_cycles, want) << what;
      EXPECT_EQ(r.cycles, want) << what;  // memory free: the whole run is the MXU
      EXPECT_EQ(r.mxu_useful_macs, s.M * s.K * s.N) << what;
    }
}

// scale-sim-v2's own regression (test/scripts/function_test.sh, configs/scale.cfg set to ws): AlexNet
// Conv1 (224x224x3, 11x11, 96 filters, stride 4: M = 55 * 55 = 3025, K = 363, N = 96) on a 32x32 array;
// test/golden_trace/COMPUTE_REPORT.csv says Total Cycles 112283, stall 0. 36 folds x 3119 = 112284.
TEST(TpuDataflows, DurationIsScaleSimTotalCyclesPlusOneOnItsGoldenTrace) {
  RunResult r = run_whole(textbook(32, 32, "weight_stationary"), 3025, 363, 96);
  EXPECT_EQ(r.cycles, 112283u + 1);
}

// The fold formula per dataflow on one fold: WS and IS preload R cycles, OS none.
TEST(TpuDataflows, OneFoldPreloadsTheArrayExceptOutputStationary) {
  EXPECT_EQ(run_whole(textbook(128, 128, "weight_stationary"), 1000, 128, 128).cycles, 2u * 128 + 128 + 1000 - 2);
  EXPECT_EQ(run_whole(textbook(128, 128, "output_stationary"), 128, 1000, 128).cycles, 128u + 128 + 1000 - 2);
  EXPECT_EQ(run_whole(textbook(128, 128, "input_stationary"), 128, 128, 1000).cycles, 2u * 128 + 128 + 1000 - 2);
}

// SRAM -> array bandwidth B words per cycle per operand port (mxu.sram_bandwidth_words_per_cycle):
// a fold phase that moves W words through a port and takes L cycles unthrottled takes
// max(L, ceil(W / B)). Streaming: WS moves T x k words through the LHS port (k = the tile's rows), IS
// T x k through the weight port, OS T x r on the rows and T x c on the columns (two ports, the
// slower one counts); so a bandwidth below the demand d words/cycle scales the streaming cycles by
// d / B. The preload (WS, IS) moves the r x c stationary tile: max(R, ceil(r c / B)). Fill and drain
// (R + C - 2) move no operands.
TEST(TpuDataflows, SramBandwidthBelowTheDemandScalesStreamingByDemandOverBandwidth) {
  const uint64_t M = 1024, K = 128, N = 128;
  for (const char* df : {"weight_stationary", "output_stationary", "input_stationary"}) {
    uint64_t unlimited = run_whole(textbook(128, 128, df), M, K, N).cycles;
    EXPECT_EQ(unlimited, scalesim(df, M, K, N, 128, 128)) << df;
    // A bandwidth at the demand (128 words/cycle: one word per array row or column) costs nothing.
    EXPECT_EQ(run_whole(textbook(128, 128, df, {"mxu.sram_bandwidth_words_per_cycle=128"}), M, K, N).cycles, unlimited)
        << df;
  }
  const std::vector<std::string> b32 = {"mxu.sram_bandwidth_words_per_cycle=32"};  // demand / B = 4
  // WS: one fold; preload max(128, 128*128/32 = 512); stream 1024 x 4; drain 254.
  EXPECT_EQ(run_whole(textbook(128, 128, "weight_stationary", b32), M, K, N).cycles, 512u + 4 * 1024 + 254);
  // OS: 8 folds of (128 rows of M, 128 of N); stream K = 128 x 4; drain 254.
  EXPECT_EQ(run_whole(textbook(128, 128, "output_stationary", b32), M, K, N).cycles, 8u * (4 * 128 + 254));
  // IS: 8 folds of (128 of K, 128 of M); preload 512; stream N = 128 x 4; drain 254.
  EXPECT_EQ(run_whole(textbook(128, 128, "input_stationary", b32), M, K, N).cycles, 8u * (512 + 4 * 128 + 254));
  // A tile narrower than the array demands fewer words: WS with k = 48 rows streams 48 words per
  // cycle, so B = 32 stretches streaming by 48 / 32.
  EXPECT_EQ(run_whole(textbook(128, 128, "weight_stationary", b32), 1024, 48, 128).cycles,
            uint64_t(std::max(128.0, 48.0 * 128 / 32)) + 1024 * 48 / 32 + 254);
}

// tpu_like (the default) keeps the weight-stationary MXU: the dataflow key defaults to it.
TEST(TpuDataflows, DefaultDataflowIsWeightStationary) {
  TpuConfig cfg = TpuConfig::load(cfg_path("tpu-v5e.yaml"));
  EXPECT_EQ(cfg.mxu.dataflow, Dataflow::kWeightStationary);
  EXPECT_EQ(cfg.mxu.sram_words_per_cycle, 0.0);
  EXPECT_STREQ(dataflow_name(cfg.mxu.dataflow), "weight_stationary");
}

std::string load_error(const std::vector<std::string>& sets) {
  try {
    TpuConfig::load(cfg_path("tpu-v5e.yaml"), sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TpuDataflows, UnknownDataflowIsAnErrorListingTheThree) {
  std::string e = load_error({"mxu.timing=textbook", "mxu.dataflow=row_stationary"});
  EXPECT_NE(e.find("mxu.dataflow: expected one of \"weight_stationary\", \"output_stationary\", "
                   "\"input_stationary\", got \"row_stationary\""),
            std::string::npos)
      << e;
}

// tpu_like's overlap is the weight-stationary staging buffer (the next weight tile loads while the
// current one streams); output and input stationary have no weight tile to stage, so they fold as in
// textbook under either timing, while weight stationary gets faster than its textbook form.
TEST(TpuDataflows, TpuLikeOverlapIsWeightStationarysOwnTheOtherDataflowsFoldAsInTextbook) {
  for (const char* df : {"output_stationary", "input_stationary", "weight_stationary"}) {
    TpuConfig tb = textbook(128, 128, df);
    TpuConfig tl = tb;
    tl.mxu.timing = MxuTiming::kTpuLike;
    RunResult a = run_whole(tb, 512, 512, 512), b = run_whole(tl, 512, 512, 512);
    if (std::string(df) == "weight_stationary")
      EXPECT_LT(b.mxu_cycles, a.mxu_cycles) << df << ": the next weight tile loads while the current one streams";
    else
      EXPECT_EQ(b.mxu_cycles, a.mxu_cycles) << df;
  }
  EXPECT_NE(load_error({"mxu.sram_bandwidth_words_per_cycle=0"}).find("outside the physical range"), std::string::npos);
}

// Rule: a zero-size dimension has no work; the lowering refuses it (it would divide by it).
TEST(TpuDataflows, ZeroSizeDimensionsAreRefused) {
  TpuConfig cfg = textbook(128, 128, "weight_stationary");
  for (auto [m, k, n] : {std::tuple{0, 64, 64}, {64, 0, 64}, {64, 64, 0}}) {
    try {
      lower(matmul(m, k, n), cfg);
      ADD_FAILURE() << m << "x" << k << "x" << n << " was lowered";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("= 0 ("), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected every dimension >= 1"), std::string::npos) << e.what();
    }
  }
  OpDesc ew;
  ew.name = "ew";
  ew.kind = OpKind::kElementwise;
  ew.rows = 128, ew.cols = 0;
  EXPECT_THROW(lower(ew, cfg), InputError);
  // A hand-built core program: a DMA of 0 rows, a zero-size weight tile and buffer.
  CoreProgram p;
  p.name = "z";
  uint32_t A = p.add_buffer("A", 128, 128, 2), Z = p.add_buffer("Z", 0, 128, 2);
  uint16_t s = p.add_semaphore();
  p.push(Step::dma_in(A, s, 0, 128));
  p.push(Step::wait(s));
  p.push(Step::load_weights(0, A, 0, 128));
  p.push(Step::matmul(0, A, 8));
  (void)Z;
  try {
    verify(p, cfg);
    ADD_FAILURE() << "verified";
  } catch (const InputError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("dma.in of a 0x128 block: a zero-size block"), std::string::npos) << w;
    EXPECT_NE(w.find("mxu.load_weights of a 0x128 tile: a zero-size tile"), std::string::npos) << w;
    EXPECT_NE(w.find("VMEM buffer Z of 0x128 x1 slots: a zero-size buffer"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace gtsim::tpu
