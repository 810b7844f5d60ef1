// Experiment b36 (validation/data/h200/experiments/b36_tile_stamp): gemm_fp32's tile loop at n = 1024
// (64 CTAs, one per SM, 8 warps) with per-warp clock stamps around its two barriers. The model's cycles
// per tile (b22's tile_loop_model.kir, the slope between 8 and 16 tiles, the L2 holding A and B as the
// twin's back-to-back launches leave it) against the H200's median stamped tile (`tile_period_cycles`:
// one barrier release to the next tile's, the median over CTAs of tiles 64 and 65).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "validation/csv.hpp"
#include "validation/simrun.hpp"
#include "validation_fixture.hpp"

using namespace gtsim;
using namespace gtsim::validation;
using namespace gtsim::validation::fixture;

namespace {

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
// (the model: 6-8% short at 8 k-steps, where the H200's shared pipe idles longer after each barrier).
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
// cycles per tile; the model 333 (17% short, not explained yet): reported, not gating (label accuracy).
TEST(AccuracyExperiments, TileLoopSkeletonWithoutLoadsTakesTheMeasuredCycles) {
  SimRunner sim(kHw, kB22);
  const double h200 = measured_tiles().at({0, false});
  const double model = model_cycles_per_tile(sim, 0, false);
  EXPECT_NEAR(model / h200, 1.0, 0.1) << "model " << model << ", H200 " << h200 << " cycles per tile";
}
