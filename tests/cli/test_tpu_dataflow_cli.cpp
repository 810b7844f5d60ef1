// `gtsim run` / `gtsim workload` on TPU configs (issue 35 items 2 and 4): the MXU dataflow
// (mxu.dataflow) reaches TPU-dialect kernels and the workload lowering; the simulated-time and event
// limits (--max-sim-seconds, --max-events) stop a TPU run with exit 2, name the limit and the flag,
// and write nothing; raising the flag lets the run finish.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/cli_harness.hpp"

namespace gtsim::test {
namespace {

using nlohmann::json;

const std::string kTextbook = " --set mxu.timing=textbook --set mxu.dataflow=";

// tpu_matmul.kir at its defaults (2048^3, 512 x 512 x 1024 blocks, 128 x 128 weight tiles, 4 MXUs):
// 32 grid steps x 8 (load_weights 128 x 128, matmul 512 rows) pairs per MXU = 256 pairs per MXU, back
// to back in textbook timing. Each pair is the block (512 x 128) @ (128 x 128):
//   WS: 1 fold of 2R + C + 512 - 2 = 894; OS: 512 / 128 = 4 folds of R + C + 128 - 2 = 382;
//   IS: 128 / 128 x 512 / 128 = 4 folds of 2R + C + 128 - 2 = 510.
TEST(TpuDataflowCli, RunOfATpuDialectKernelFoldsItsMatmulsByTheDataflow) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"weight_stationary", 256 * 894}, {"output_stationary", 256 * 4 * 382}, {"input_stationary", 256 * 4 * 510}};
  for (auto [df, want] : cases) {
    CliResult c =
        gtsim_cli("run --hw hw_configs/tpu-v5e.yaml --kernel kernels_ir/lib/tpu_matmul.kir --json -" + kTextbook + df);
    ASSERT_EQ(c.rc, 0) << df << ": " << c.err;
    json j = json::parse(c.out);
    EXPECT_EQ(j["mxu_cycles"].get<uint64_t>(), want) << df;
    EXPECT_EQ(j["mxu_useful_macs"].get<uint64_t>(), 2048ull * 2048 * 2048) << df;
  }
}

// The workload lowering with the whole GEMM as one block (--tiling MxKxN): 1024^3 on four 128 x 128
// MXUs, 64 folds round robin, 16 per MXU: WS and IS 16 x (2R + C + 1024 - 2), OS 16 x (R + C + 1024 - 2).
TEST(TpuDataflowCli, WorkloadMatmulFollowsTheClosedFormWithTheWholeGemmAsOneBlock) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"weight_stationary", 16 * 1406}, {"output_stationary", 16 * 1278}, {"input_stationary", 16 * 1406}};
  for (auto [df, want] : cases) {
    CliResult c = gtsim_cli(
        "workload --hw hw_configs/tpu-v5e.yaml --workload kernels_ir/workloads/amdahl.yaml --param M=1024 "
        "--param K=1024 --param N=1024 --tiling 1024x1024x1024 --json -" +
        kTextbook + df);
    ASSERT_EQ(c.rc, 0) << df << ": " << c.err;
    json j = json::parse(c.out);
    ASSERT_EQ(j["ops"][0]["kind"], "matmul");
    EXPECT_EQ(j["ops"][0]["mxu_cycles"].get<uint64_t>(), want) << df;
  }
  // under the default tpu_like timing output stationary folds as in textbook (tpu_like's overlap is
  // weight-stationary's): the same MXU cycles
  CliResult c = gtsim_cli(
      "workload --hw hw_configs/tpu-v5e.yaml --workload kernels_ir/workloads/amdahl.yaml --param M=1024 "
      "--param K=1024 --param N=1024 --tiling 1024x1024x1024 --json - --set mxu.dataflow=output_stationary");
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_EQ(json::parse(c.out)["ops"][0]["mxu_cycles"].get<uint64_t>(), uint64_t(16 * 1278));
}

// A v5e whose HBM moves 1 MB/s: tpu_matmul at its defaults takes about 59 simulated seconds, past the
// 10 s default.
const std::string kSlowRun =
    "run --hw hw_configs/tpu-v5e.yaml --kernel kernels_ir/lib/tpu_matmul.kir --set hbm.bandwidth_gbps=0.001";

TEST(TpuDataflowCli, SimulatedTimeLimitStopsATpuRunNamesTheFlagAndCanBeRaised) {
  std::filesystem::path out = std::filesystem::temp_directory_path() / "gtsim_tpu_limit.json";
  std::filesystem::remove(out);
  CliResult c = gtsim_cli(kSlowRun + " --json " + out.string());
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("simulated time limit reached"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("--max-sim-seconds"), std::string::npos) << c.err;
  EXPECT_TRUE(c.out.empty()) << c.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  c = gtsim_cli(kSlowRun + " --max-sim-seconds 1000 --json -");
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_GT(json::parse(c.out)["device_us"].get<double>(), 10e6);
}

TEST(TpuDataflowCli, EventLimitStopsATpuRunAndWorkloadNamingTheFlag) {
  CliResult c =
      gtsim_cli("run --hw hw_configs/tpu-v5e.yaml --kernel kernels_ir/lib/tpu_matmul.kir --max-events 100 --json -");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("event limit reached"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("--max-events"), std::string::npos) << c.err;
  EXPECT_TRUE(c.out.empty()) << c.out;
  c = gtsim_cli(
      "workload --hw hw_configs/tpu-v5e.yaml --workload kernels_ir/workloads/amdahl.yaml --max-events 100 --json -");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("--max-events"), std::string::npos) << c.err;
  EXPECT_TRUE(c.out.empty()) << c.out;
}

// The workload's calls run one after another on one chip: their device times add up against the limit.
TEST(TpuDataflowCli, WorkloadSimulatedTimeLimitCountsAllItsCalls) {
  const std::string w =
      "workload --hw hw_configs/tpu-v5e.yaml --workload kernels_ir/workloads/amdahl.yaml --param M=1024 "
      "--param K=1024 --param N=1024 --json -";
  CliResult ok = gtsim_cli(w);
  ASSERT_EQ(ok.rc, 0) << ok.err;
  json j = json::parse(ok.out);
  double device_s = j["total_us_device"].get<double>() * 1e-6;
  double longest = 0;
  for (const json& op : j["ops"]) longest = std::max(longest, op["time_us"].get<double>() * 1e-6);
  ASSERT_GT(device_s, longest * 1.01);
  // Above every single call, below their sum: the workload stops.
  char lim[64];
  std::snprintf(lim, sizeof lim, " --max-sim-seconds %.9g", (longest + device_s) / 2);
  CliResult c = gtsim_cli(w + lim);
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("simulated time limit reached"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("--max-sim-seconds"), std::string::npos) << c.err;
  EXPECT_TRUE(c.out.empty()) << c.out;
}

}  // namespace
}  // namespace gtsim::test
