// `gtsim run` and `gtsim workload` on TPU configs (issue 35 item 1): a TPU-dialect kernel or a
// workload runs on the TPU model with a report in the GPU run's shape; a GPU kernel on a TPU config,
// a TPU kernel on a GPU config, and GPU-only options on a TPU config get one sentence saying what fits.
#include <gtest/gtest.h>

#include "tests/cli/cli_harness.hpp"

namespace gtsim::test {
namespace {

using nlohmann::json;

const std::string kTpuMatmul =
    "run --hw hw_configs/tpu-v5e.yaml --kernel kernels_ir/lib/tpu_matmul.kir --param M=1024 --param N=1024 "
    "--param K=1024";

TEST(TpuCli, RunSimulatesATpuDialectKernelWithTheGpuReportsKeys) {
  CliResult c = gtsim_cli(kTpuMatmul + " --json -");
  ASSERT_EQ(c.rc, 0) << c.err;
  json j = json::parse(c.out);
  EXPECT_EQ(j["target"], "tpu");
  EXPECT_EQ(j["kernel"], "tpu_matmul");
  EXPECT_EQ(j["flops"].get<uint64_t>(), 2ull * 1024 * 1024 * 1024);
  // Time is the device time plus the call's dispatch, as a GPU run's is cycles plus launch.
  EXPECT_NEAR(j["time_us"].get<double>(), j["device_us"].get<double>() + j["dispatch_us"].get<double>(), 1e-9);
  // The GPU report's DRAM keys carry the HBM's bytes; at least each operand once (bf16 A, B; C written).
  EXPECT_EQ(j["dram_read_bytes"], j["hbm_read_bytes"]);
  EXPECT_GE(j["dram_read_bytes"].get<uint64_t>(), 2ull * 1024 * 1024 * 2);
  EXPECT_GE(j["dram_write_bytes"].get<uint64_t>(), 1024ull * 1024 * 2);
  // mxu_cycles (SCALE-Sim's compute cycles): the busiest MXU's busy cycles, within the device time.
  uint64_t mxu = j["mxu_cycles"], cycles = j["cycles"];
  EXPECT_GT(mxu, 0u);
  EXPECT_LE(mxu, cycles);
  EXPECT_NEAR(double(mxu) / double(cycles), j["mxu_busy_frac"].get<double>(), 0.01);
  EXPECT_GT(j["mxu_utilization"].get<double>(), 0.0);
  EXPECT_LE(j["mxu_utilization"].get<double>(), 1.0);
  EXPECT_TRUE(j["sampling"]["exact"].get<bool>());
  EXPECT_FALSE(j.contains("stats"));

  CliResult text = gtsim_cli(kTpuMatmul);
  ASSERT_EQ(text.rc, 0) << text.err;
  for (const char* s : {"(TPU)", "time", "MXU", "HBM", "bound"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << " missing from\n" << text.out;
}

TEST(TpuCli, EachDialectOnTheOtherTargetSaysWhichFits) {
  CliResult c = gtsim_cli("run --hw hw_configs/tpu-v5e.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=1024");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("kernels_ir/lib/stream_copy.kir:"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("is a GPU kernel"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("TPU-dialect kernel"), std::string::npos) << c.err;
  c = gtsim_cli("run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/tpu_matmul.kir");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("kernels_ir/lib/tpu_matmul.kir:"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("is a TPU-dialect kernel"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("unknown instruction"), std::string::npos) << c.err;
}

TEST(TpuCli, WorkloadRunsOnATpuConfigWithDispatchApartFromDeviceTime) {
  const std::string w =
      "workload --hw hw_configs/tpu-v5e.yaml --workload kernels_ir/workloads/amdahl.yaml --param M=1024 --param K=1024 "
      "--param N=1024 --json -";
  CliResult c = gtsim_cli(w);
  ASSERT_EQ(c.rc, 0) << c.err;
  json j = json::parse(c.out);
  EXPECT_EQ(j["target"], "tpu");
  double device = 0;
  bool matmul_seen = false;
  for (const json& op : j["ops"]) {
    device += op["time_us"].get<double>();
    ASSERT_TRUE(op.contains("mxu_cycles"));
    if (op["kind"] == "matmul") {
      matmul_seen = true;
      EXPECT_GT(op["mxu_cycles"].get<uint64_t>(), 0u);
    }
  }
  EXPECT_TRUE(matmul_seen);
  EXPECT_NEAR(j["total_us_device"].get<double>(), device, 1e-6);
  EXPECT_NEAR(j["total_us"].get<double>(), device + j["dispatch_us"].get<double>(), 1e-6);

  // --tiling reaches the lowering: a 128-row block streams the weights more often than the default.
  CliResult t = gtsim_cli(w + " --tiling 128x128x128");
  ASSERT_EQ(t.rc, 0) << t.err;
  json small = json::parse(t.out);
  EXPECT_GT(small["hbm_bytes"].get<uint64_t>(), j["hbm_bytes"].get<uint64_t>());
}

TEST(TpuCli, GpuOnlyOptionsAndBadTilingsAreRefusedBeforeTheRun) {
  const std::string tpu_w = "workload --hw hw_configs/tpu-v5e.yaml --workload kernels_ir/workloads/amdahl.yaml";
  for (const char* opt : {" --cuda-graph", " --no-carry-l2", " --tile 64x64"}) {
    CliResult c = gtsim_cli(tpu_w + opt);
    EXPECT_EQ(c.rc, 2) << opt;
    EXPECT_NE(c.err.find("for GPU configs"), std::string::npos) << opt << ": " << c.err;
  }
  CliResult c = gtsim_cli(kTpuMatmul + " --l2-start hot");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("not for TPU configs"), std::string::npos) << c.err;
  c = gtsim_cli("workload --hw hw_configs/a100-40gb.yaml --workload kernels_ir/workloads/amdahl.yaml --tiling 1x1x1");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("--tiling is for TPU configs"), std::string::npos) << c.err;
  for (const char* bad : {"512x512", "512x512x", "ax1x1", "1x2x3x4"}) {
    c = gtsim_cli(tpu_w + " --tiling " + bad);
    EXPECT_EQ(c.rc, 2) << bad;
    EXPECT_NE(c.err.find("expected BMxBKxBN"), std::string::npos) << bad << ": " << c.err;
  }
}

}  // namespace
}  // namespace gtsim::test
