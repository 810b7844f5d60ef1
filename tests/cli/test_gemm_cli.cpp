// gtsim gemm: the pick, its simulated time and the ranked candidates as JSON; bad dimensions exit 2.
#include <gtest/gtest.h>

#include "tests/cli/cli_harness.hpp"

namespace gtsim::test {
namespace {

TEST(GemmCli, JsonHasThePickItsTimeAndTheRankedCandidates) {
  auto r = gtsim_cli("gemm --hw hw_configs/a100-40gb.yaml 512 512 512 --json -");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"time_us", "tflops", "kernel", "tile", "schedule", "split", "dtype", "m", "n", "k", "model",
                        "sampling", "dram_bytes", "candidates", "reason"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["m"], 512);
  EXPECT_EQ(j["n"], 512);
  EXPECT_EQ(j["k"], 512);
  EXPECT_EQ(j["dtype"], "bf16");
  EXPECT_GT(j["time_us"].get<double>(), 0);
  EXPECT_GT(j["tflops"].get<double>(), 0);
  EXPECT_NE(j["kernel"].get<std::string>().find(".kir"), std::string::npos);
  const std::string model = j["model"];
  EXPECT_TRUE(model == "simulated, sampled" || model == "simulated, exact") << model;
  for (const char* k : {"exact", "fraction_simulated", "estimated_error_pct"})
    EXPECT_TRUE(j["sampling"].contains(k)) << k;
  ASSERT_FALSE(j["candidates"].empty());
  int picks = 0, simulated = 0;
  double last = 0;
  for (const auto& c : j["candidates"]) {
    for (const char* k : {"tile", "schedule", "split", "score_us", "waves", "why", "simulated"})
      EXPECT_TRUE(c.contains(k)) << k;
    EXPECT_GE(c["score_us"].get<double>(), last);  // best score first
    last = c["score_us"].get<double>();
    if (c["simulated"].get<bool>()) {
      ++simulated;
      EXPECT_TRUE(c.contains("time_us"));
    }
    if (c.value("pick", false)) {
      ++picks;
      EXPECT_EQ(c["tile"], j["tile"]);
      EXPECT_EQ(c["schedule"], j["schedule"]);
      EXPECT_EQ(c["time_us"], j["time_us"]);
    }
  }
  EXPECT_EQ(picks, 1);
  EXPECT_EQ(simulated, 1);  // no --autotune: the top candidate only
}

TEST(GemmCli, TextNamesThePickAndTheTable) {
  auto r = gtsim_cli("gemm --hw hw_configs/a100-40gb.yaml 256 256 256");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* s : {"pick", "TFLOP/s", "DRAM", "sampling", "candidates", "why", "score_us"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(GemmCli, ADimensionThatIsNotAPositiveIntegerExitsTwo) {
  for (const char* dims : {"0 512 512", "512 -4 512", "512 512 12x", "512 512"}) {
    auto r = gtsim_cli(std::string("gemm --hw hw_configs/a100-40gb.yaml ") + dims);
    EXPECT_EQ(r.rc, 2) << dims << ": " << r.out;
    EXPECT_FALSE(r.err.empty()) << dims;
  }
  auto r = gtsim_cli("gemm --hw hw_configs/a100-40gb.yaml 0 512 512");
  EXPECT_NE(r.err.find("M must be a positive integer"), std::string::npos) << r.err;
  auto d = gtsim_cli("gemm --hw hw_configs/a100-40gb.yaml 512 512 512 --dtype e4m3");  // no fp8 on Ampere
  EXPECT_EQ(d.rc, 2) << d.out;
}

}  // namespace
}  // namespace gtsim::test
