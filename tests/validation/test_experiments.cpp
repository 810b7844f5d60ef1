// The H200 experiments that are not validation batches (validation/data/h200/experiments, each with
// its README): the model against what each measured, rule by rule. b29 (the barrier and the load burst
// after it), b33 (a steady and a barrier load loop), b35 (the store path), b36 (gemm_fp32's tile loop).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "validation/csv.hpp"
#include "validation/fidelity.hpp"
#include "validation/simrun.hpp"
#include "validation_fixture.hpp"

using namespace gtsim;
using namespace gtsim::validation;
using namespace gtsim::validation::fixture;

namespace {

// The rows of a committed CSV file as column -> value (validation/csv.hpp).
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& path) {
  CsvTable t = read_csv(path);
  EXPECT_FALSE(t.rows.empty()) << path;
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t r = 0; r < t.rows.size(); ++r) rows.push_back(t.row_map(r));
  return rows;
}

// b29's lds_burst_period.csv: the H200's cycles per repetition of one variant, by warps per CTA.
std::map<int64_t, double> lds_burst_periods(const std::string& dir, const std::string& variant, int64_t loads) {
  std::map<int64_t, double> out;
  for (auto& r : csv_rows(dir + "/lds_burst_period.csv"))
    if (r["variant"] == variant && std::stoll(r["loads"]) == loads)
      out[std::stoll(r["warps"])] = std::stod(r["period_cycles"]);
  EXPECT_FALSE(out.empty()) << dir;
  return out;
}

// The model's cycles per repetition of lds_burst_model.kir variant V at `warps`: the slope between
// 8 and 16 (`per` reps a repetition: V 0 runs 16 barriers a rep).
double lds_burst_model_period(SimRunner& sim, int64_t V, int64_t warps, double per) {
  auto run = [&](int64_t reps) {
    auto r = sim.run({"lds_burst_model", {{"V", V}, {"warps", warps}, {"reps", reps}}, {}});
    EXPECT_TRUE(r.ok) << r.error;
    return double(r.result.cycles);
  };
  return (run(16) - run(8)) / (8 * per);
}

// The H200's barrier (sm.barrier, derived from this file): a loop of back-to-back BAR.SYNC in one CTA of
// 1 to 32 warps per SM costs 13.1 + 2.0 cycles per warp per barrier (lds_burst, b29). The model runs the
// same loop (the experiment's lds_burst_model.kir, V = 0) within 5% at every warp count.
TEST(Validation, BarrierRoundTripGrowsWithTheArrivingWarpsAsMeasured) {
  const std::string dir = std::string(kData) + "/experiments/b29_lds_burst";
  SimRunner sim(kHw, dir);
  auto measured = lds_burst_periods(dir, "barrier", 0);
  EXPECT_EQ(measured.size(), 6u);  // 1, 2, 4, 8, 16, 32 warps
  for (const auto& [w, period] : measured) {
    const double model = lds_burst_model_period(sim, 0, w, 16);
    EXPECT_NEAR(model / period, 1.0, 0.05) << w << " warps: model " << model << ", H200 " << period;
  }
}

// gemm_fp32's k-step after a barrier: every warp's four LDS.128 (20 wavefronts) at once. The H200
// serves them interleaved, and one warp alone at two cycles a wavefront (b29, b31): a CTA of 1-32
// warps takes 92-687 cycles a repetition. The round-robin shared pipe reproduces it (in issue order,
// the config's, the model takes 23% less at one warp; the README of b29 says why it is not the default).
TEST(Validation, RoundRobinSharedPipeTakesTheLoadBurstAfterABarrierAsMeasured) {
  const std::string dir = std::string(kData) + "/experiments/b29_lds_burst";
  SimRunner sim(kHw, dir, {"sm.shared.arbitration=round_robin", "sm.shared.warp_cycles_per_wavefront=2"});
  auto measured = lds_burst_periods(dir, "gemm", 4);
  EXPECT_EQ(measured.size(), 6u);
  for (const auto& [w, period] : measured) {
    const double model = lds_burst_model_period(sim, 2, w, 1);
    EXPECT_NEAR(model / period, 1.0, 0.10) << w << " warps: model " << model << ", H200 " << period;
  }
}

// gemm_fp32's k-step as a loop of its own (b33's lds_steady: four LDS.128, 20 wavefronts a warp, then 64
// FFMA on them), one CTA of 1-16 warps per SM, without and with a barrier before each repetition. The
// H200 keeps a sub-partition's warps apart in the steady loop (166 cycles a repetition at 1-4 warps,
// 238 at 8) and serves them together after a barrier (333 at 8): the shipped config (sub-partition
// order, two cycles a wavefront per warp, the LSU interval held by the issuing warp) times all ten
// within 12%; in issue order with the LSU held (fifo) the steady loop is 14% short at 1-8 warps and
// the barrier loop 21% short at 16.
std::map<std::pair<std::string, int64_t>, double> lds_steady_periods(const std::string& dir) {
  std::map<std::pair<std::string, int64_t>, double> out;
  for (auto& r : csv_rows(dir + "/lds_steady.csv"))
    out[{r["variant"], std::stoll(r["warps"])}] = std::stod(r["period_cycles"]);
  return out;
}

TEST(Validation, SharedPipeTimesTheSteadyAndTheBarrierLoadLoopAsMeasured) {
  const std::string dir = std::string(kData) + "/experiments/b33_lds_steady";
  SimRunner sim(kHw, dir);
  auto measured = lds_steady_periods(dir);
  EXPECT_EQ(measured.size(), 10u);  // steady and barrier, 1 2 4 8 16 warps
  for (const auto& [key, period] : measured) {
    const int64_t B = key.first == "barrier" ? 1 : 0, warps = key.second;  // (clang 14 lambdas capture no binding)
    auto run = [&](int64_t reps) {
      auto r = sim.run({"lds_steady_model", {{"B", B}, {"warps", warps}, {"reps", reps}}, {}});
      EXPECT_TRUE(r.ok) << r.error;
      return double(r.result.cycles);
    };
    const double model = (run(32) - run(16)) / 16;
    EXPECT_NEAR(model / period, 1.0, 0.12)
        << key.first << " " << key.second << " warps: model " << model << ", H200 " << period << " cycles a repetition";
  }
}

// Experiment b35 (store_rate): whole sectors leave an SM at 32 bytes a cycle, half-written ones at
// 12.8 (their byte masks), on 1 and 66 SMs alike; 132 SMs are held by the L2's write rate. The model's
// bytes per SM cycle (the slope between 2 and 4 passes) against the H200's, CTAs of 8 warps: on 1 and
// 66 SMs the median CTA's (clock64: an SM's own rate; at 66 the slowest CTA takes 1.2x as long, which
// the model does not have), on 132 the launch's (bytes over the launch time at 1980 MHz).
TEST(Validation, StoresLeaveTheSmAndEnterTheL2AtTheMeasuredRates) {
  const std::string dir = std::string(kData) + "/experiments/b35_store_rate";
  SimRunner sim(kHw, dir);
  const std::map<std::string, int64_t> pattern = {{"lines", 0}, {"halves", 1}, {"sectors", 2}};
  int checked = 0;
  for (auto& f : csv_rows(dir + "/store_rate.csv")) {
    if (f["warps"] != "8") continue;
    const int64_t n = std::stoll(f["ctas"]);
    if (n != 1 && n != 66 && n != 132) continue;
    const double h200 = n == 132 ? std::stod(f["gbps"]) / double(n) / 1.98 : std::stod(f["bytes_per_sm_cycle"]);
    auto cycles = [&](int64_t passes) {
      auto r = sim.run({"store_rate", {{"pattern", pattern.at(f["variant"])}, {"ctas", n}, {"passes", passes}}, {}});
      EXPECT_TRUE(r.ok) << r.error;
      return double(r.result.cycles);
    };
    const double model = 128.0 * 1024 / ((cycles(4) - cycles(2)) / 2);
    EXPECT_NEAR(model / h200, 1.0, 0.1) << f["variant"] << " on " << n << " SMs: model " << model << ", H200 " << h200
                                        << " bytes per SM cycle";
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

// Experiment b36 (validation/data/h200/experiments/b36_tile_stamp): gemm_fp32's tile loop at n = 1024
// (64 CTAs, one per SM, 8 warps) with per-warp clock stamps around its two barriers. The model's cycles
// per tile (b22's tile_loop_model.kir, the slope between 8 and 16 tiles, the L2 holding A and B as the
// twin's back-to-back launches leave it) against the H200's median stamped tile (`tile_period_cycles`:
// one barrier release to the next tile's, the median over CTAs of tiles 64 and 65).
const std::string kB36 = kData + "/experiments/b36_tile_stamp";
const std::string kB22 = kData + "/experiments/b22_tile_loop_without_loads";

// (k-steps of math, global loads) -> the H200's median cycles per tile at n = 1024
std::map<std::pair<int64_t, bool>, double> measured_tiles() {
  CsvTable t = read_csv(kB36 + "/tile_stamp.csv");
  std::map<std::pair<int64_t, bool>, double> out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (t.get(r, "n") != "1024" || t.get(r, "warp") != "0") continue;
    auto ks = t.number(r, "ksteps"), period = t.number(r, "tile_period_cycles");
    if (ks && period) out[{int64_t(*ks), t.get(r, "variant") == "loads"}] = *period;
  }
  return out;
}

double model_cycles_per_tile(SimRunner& sim, int64_t ks, bool loads) {
  auto cycles = [&](int64_t K) {
    SimJob job{"tile_loop_model", {{"M", 1024}, {"N", 1024}, {"K", K}, {"KS", ks}, {"LOADS", loads ? 1 : 0}}, {}};
    job.history.start = gpu::L2Start::kResident;
    auto r = sim.run(job);
    EXPECT_TRUE(r.ok) << r.error;
    return double(r.result.cycles);
  };
  return (cycles(128) - cycles(64)) / 8;
}

}  // namespace

// With its math (1 or 8 k-steps) and with its global loads, a tile takes the H200's cycles within 10%
// (the model, with the twins' address and value arithmetic (b40): 5% short at 8 k-steps with loads, 9.6%
// without, where the H200's math between the barriers takes about 75 cycles longer).
TEST(Validation, TileLoopTakesTheMeasuredCyclesPerTile) {
  SimRunner sim(kHw, kB22);
  auto measured = measured_tiles();
  ASSERT_EQ(measured.size(), 6u);  // 0, 1, 8 k-steps, with and without loads
  for (const auto& [key, h200] : measured) {
    const auto [ks, loads] = key;
    if (ks == 0 && !loads) continue;  // AccuracyExperiments below
    const double model = model_cycles_per_tile(sim, ks, loads);
    EXPECT_NEAR(model / h200, 1.0, 0.1) << ks << " k-steps " << (loads ? "with" : "without") << " loads: model "
                                        << model << ", H200 " << h200 << " cycles per tile";
  }
}

// Without loads or math (shared stores, two barriers, one shared load of each tile) the H200 takes 403
// cycles per tile; the model 286 (29% short since the tile's value arithmetic runs on its SASS's pipes,
// b40; 17% when it was all INT-pipe XORs; not explained yet): reported, not gating (label accuracy).
TEST(AccuracyExperiments, TileLoopSkeletonWithoutLoadsTakesTheMeasuredCycles) {
  SimRunner sim(kHw, kB22);
  const double h200 = measured_tiles().at({0, false});
  const double model = model_cycles_per_tile(sim, 0, false);
  EXPECT_NEAR(model / h200, 1.0, 0.1) << "model " << model << ", H200 " << h200 << " cycles per tile";
}

// Experiment b40 (validation/data/h200/experiments/b40_sm_skew): gemm_fp32's twin spends 18 integer
// instructions a tile besides the loop's counter and compare (its loads' addresses and edge predicates,
// and four CS2R zeroing the load registers) and two issue slots (LDC.64 of the A and B pointers). The IR
// kernel issues them (gemm_fp32.kir), so its main loop matches the compiled one class by class within 10%,
// and the loop overhead, listed but not gated, too: the SASS's int class is the IR's plus the loop's own
// IADD3 and ISETP, which the IR counts as loop control. Without them the IR's int class was 0 against 20.
TEST(TwinFidelity, GemmFp32IssuesItsTwinsAddressWorkEveryTile) {
  const std::string dir = kData + "/experiments/b40_sm_skew";
  SimRunner sim(kHw, kKernels);
  auto r = check_fidelity(slurp(dir + "/ptxas.txt"), "recorded", read_gz(dir + "/sass.txt.gz"), sim, kHw, {}, "b40");
  const TwinCheck* t = r.find("b40", "gemm_fp32ILi4", "gemm_fp32");
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->sass_checked);
  EXPECT_TRUE(t->sass_ok) << t->sass_detail.dump();
  const auto& in = t->sass_detail["int (not gated)"];
  const auto& sl = t->sass_detail["slot (not gated)"];
  EXPECT_NEAR(in["ir_x_unroll"].get<double>() + 2, in["sass"].get<double>(), 1.0) << t->sass_detail.dump();
  EXPECT_NEAR(sl["ir_x_unroll"].get<double>(), sl["sass"].get<double>(), 0.5) << t->sass_detail.dump();
}
