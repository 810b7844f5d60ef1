// `gtsim compare --set PATH=VALUE` and `--tiling BMxBKxBN` (issue 35 item 3): --set applies to every
// --hw and is refused, naming the machine, when a config lacks the key; --tiling sets the TPU
// machines' matmul blocks and is refused when no --hw is a TPU; both refusals exit 2 before anything
// is simulated or written.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/cli_harness.hpp"

namespace gtsim::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kCompare =
    "compare --workload docs/figures/mlp_small.yaml --hw hw_configs/tpu-v5e.yaml --hw hw_configs/tpu-v6e.yaml";

TEST(CompareCli, SetAppliesToEveryMachineAndLabelsThemDerived) {
  CliResult base = gtsim_cli(kCompare + " --json -");
  ASSERT_EQ(base.rc, 0) << base.err;
  CliResult c = gtsim_cli(kCompare + " --set dispatch.overhead_us=0 --json -");
  ASSERT_EQ(c.rc, 0) << c.err;
  json b = json::parse(base.out), j = json::parse(c.out);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(b["machines"][i]["dispatch_us"].get<double>(), 0.0);
    EXPECT_EQ(j["machines"][i]["dispatch_us"].get<double>(), 0.0) << j["machines"][i]["name"];
    EXPECT_EQ(j["validation"][i]["status"], "derived");
  }
  EXPECT_EQ(j["set"][0], "dispatch.overhead_us=0");
}

TEST(CompareCli, SetOfAKeyOneMachineLacksIsRefusedNamingIt) {
  fs::path out = fs::temp_directory_path() / "gtsim_compare_set_refused.json";
  fs::remove(out);
  CliResult c = gtsim_cli(
      "compare --workload docs/figures/mlp_small.yaml --hw hw_configs/teach-tiny.yaml --hw hw_configs/tpu-v5e.yaml "
      "--set mxu.timing=textbook --json " +
      out.string());
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("machine teach-tiny (hw_configs/teach-tiny.yaml) has no key mxu.timing"), std::string::npos)
      << c.err;
  EXPECT_TRUE(c.out.empty());
  EXPECT_FALSE(fs::exists(out)) << "nothing half-written";
}

TEST(CompareCli, TilingSetsTheTpuMachinesMatmulBlocks) {
  CliResult a = gtsim_cli(kCompare + " --json -");
  CliResult b = gtsim_cli(kCompare + " --tiling 128x128x128 --json -");
  ASSERT_EQ(a.rc, 0) << a.err;
  ASSERT_EQ(b.rc, 0) << b.err;
  json ja = json::parse(a.out), jb = json::parse(b.out);
  EXPECT_EQ(jb["tiling"], "128x128x128");
  // 128^3 blocks: more grid steps, each a fill and drain, and operands re-read: slower on the v5e
  const auto& ta = ja["ops"][0]["machines"]["Google TPU v5e"];
  const auto& tb = jb["ops"][0]["machines"]["Google TPU v5e"];
  EXPECT_GT(tb["device_us"].get<double>(), ta["device_us"].get<double>());
  EXPECT_GT(tb["hbm_bytes"].get<uint64_t>(), ta["hbm_bytes"].get<uint64_t>());
}

TEST(CompareCli, TilingWithoutATpuMachineAndABadTilingAreRefused) {
  CliResult c = gtsim_cli(
      "compare --workload docs/figures/mlp_small.yaml --hw hw_configs/teach-tiny.yaml --hw "
      "hw_configs/teach-tiny.yaml --tiling 512x1024x1024");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("no --hw is a TPU config"), std::string::npos) << c.err;
  EXPECT_TRUE(c.out.empty());
  CliResult d = gtsim_cli(kCompare + " --tiling 512x1024");
  EXPECT_EQ(d.rc, 2);
  EXPECT_NE(d.err.find("--tiling 512x1024: expected BMxBKxBN"), std::string::npos) << d.err;
  EXPECT_TRUE(d.out.empty());
}

}  // namespace
}  // namespace gtsim::test
