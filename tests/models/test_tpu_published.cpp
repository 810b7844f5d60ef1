// Rule: the table "Published TPU measurements against gtsim" in docs/tpu.md cannot drift silently.
// Three of its rows are recomputed here (a held-out XLA point, a held-out Pallas point with the
// guide's 512x1024x1024 blocks, and the Pallas 128^3 blocks): the gtsim figure printed in the table
// must be what the model gives now (within 1%), and the printed error must follow from the printed
// published and gtsim figures (within 0.5 points). A miss stays a miss: the test pins the page to
// the model, not the model to the measurement.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "models/tpu/compare.hpp"
#include "sim/error.hpp"
#include "tests/test_paths.hpp"

namespace gtsim::tpu {
namespace {

using gtsim::testing::src;

// The cells of the docs/tpu.md table row whose first cell is `id`.
std::vector<std::string> doc_row(const std::string& id) {
  std::ifstream in(src("docs/tpu.md"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| " + id + " |", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string c; std::getline(ss, c, '|');) {
      size_t a = c.find_first_not_of(' '), b = c.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : c.substr(a, b - a + 1));
    }
    return cells;
  }
  return {};
}

// "123.4 us" or "11.77 ms" -> microseconds; "-4.6%" -> -4.6.
double num(const std::string& cell) {
  double v = std::stod(cell);
  return cell.find(" ms") != std::string::npos ? v * 1e3 : v;
}

double gtsim_us(uint64_t n, MatmulTiling tiling) {
  auto w = wl::Workload::load_file(src("docs/figures/tpu_matmul_square.yaml"), {{"N", int64_t(n)}});
  TpuRunOptions opt;
  opt.lower.tiling = tiling;
  return run_tpu_workload(TpuConfig::load(src("hw_configs/tpu-v5e.yaml")), w, opt).total_us;
}

TEST(TpuPublished, DocTableRowsRecomputeWithinTolerance) {
  struct Case {
    const char* id;
    uint64_t n;
    MatmulTiling tiling;
  };
  const Case cases[] = {{"X2", 4096, {}}, {"P2", 4096, {512, 1024, 1024}}, {"S1", 1024, {128, 128, 128}}};
  for (const auto& c : cases) {
    auto row = doc_row(c.id);
    // | id | chip | measurement | source | published | gtsim | error | fitted? |
    ASSERT_GE(row.size(), 7u) << c.id << " row missing from docs/tpu.md";
    double published = num(row[4]), doc_gtsim = num(row[5]), doc_err = num(row[6]);
    double now = gtsim_us(c.n, c.tiling);
    EXPECT_NEAR(now, doc_gtsim, 0.01 * doc_gtsim) << c.id << ": the model moved; update docs/tpu.md";
    EXPECT_NEAR(100.0 * (doc_gtsim - published) / published, doc_err, 0.5) << c.id;
  }
}

}  // namespace
}  // namespace gtsim::tpu
