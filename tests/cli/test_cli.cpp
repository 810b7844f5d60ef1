// The command-line contract: exit codes, file:line:col errors, JSON keys, nothing half-written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/cli/cli_harness.hpp"

namespace gtsim::test {
namespace {
namespace fs = std::filesystem;

fs::path temp_file(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / (std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p;
}

TEST(Cli, VersionAndHelpOnEverySubcommand) {
  auto v = gtsim_cli("--version");
  EXPECT_EQ(v.rc, 0);
  EXPECT_NE(v.out.find("gtsim"), std::string::npos);
  for (const char* sub : {"run", "check", "trace"}) {
    auto h = gtsim_cli(std::string(sub) + " --help");
    EXPECT_EQ(h.rc, 0) << sub;
    EXPECT_NE(h.out.find("--"), std::string::npos) << sub;
  }
}

TEST(Cli, UnknownSubcommandOrOptionExitsTwo) {
  EXPECT_EQ(gtsim_cli("frobnicate").rc, 2);
  EXPECT_EQ(gtsim_cli("run --no-such-option").rc, 2);
}

TEST(Cli, CheckAcceptsEveryShippedConfig) {
  auto r = gtsim_cli(
      "check hw_configs/a100-40gb.yaml hw_configs/a100-80gb.yaml hw_configs/h100-sxm.yaml "
      "hw_configs/h200-sxm.yaml hw_configs/teach-tiny.yaml");
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(Cli, MisspeltConfigKeyGivesFileLineAndKey) {
  std::string base = slurp(fs::path(GTSIM_SOURCE_DIR) / "hw_configs/a100-40gb.yaml");
  auto p = temp_file("typo.yaml", base + "\nsm_cuont: 3\n");
  auto r = gtsim_cli("check " + p.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("typo.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sm_cuont"), std::string::npos) << r.err;
  fs::remove(p);
}

TEST(Cli, WrongTypeInConfigNamesThePath) {
  std::string base = slurp(fs::path(GTSIM_SOURCE_DIR) / "hw_configs/a100-40gb.yaml");
  auto p = temp_file("wrongtype.yaml",
                     "base: " + std::string(GTSIM_SOURCE_DIR) + "/hw_configs/a100-40gb.yaml\nl2:\n  assoc: sixteen\n");
  auto r = gtsim_cli("check " + p.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("wrongtype.yaml:3:10"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("l2.assoc"), std::string::npos) << r.err;
  fs::remove(p);
}

TEST(Cli, KernelSyntaxErrorGivesFileLineCol) {
  auto p = temp_file("broken.kir", "kernel k() {\n  grid 1 block 32 regs 32\n  ??? (((\n}\n");
  auto r = gtsim_cli("check " + p.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("broken.kir:3:"), std::string::npos) << r.err;
  fs::remove(p);
}

TEST(Cli, RunJsonHasTheContractKeysWithRealDramBytes) {
  auto r = gtsim_cli(
      "run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/stream_copy.kir "
      "--param n=1048576 --json -");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"kernel", "hw", "cycles", "time_us", "ctas", "waves", "warp_instructions", "dram_read_bytes",
                        "dram_write_bytes", "l2_hit_rate", "flops", "sim_wall_seconds", "events", "metrics"})
    EXPECT_TRUE(j.contains(k)) << k;
  // A copy of 4 MiB reads at least the 4 MiB it copies from HBM (cold caches).
  EXPECT_GE(j["dram_read_bytes"].get<double>(), 4.0 * 1048576);
  EXPECT_TRUE(j["metrics"].contains("dram__bytes_read.sum"));
  EXPECT_TRUE(j["metrics"].contains("launch__waves_per_multiprocessor"));
  EXPECT_TRUE(j.contains("validation"));
}

// --l2-start rotating: the launches before it (on other buffers) left the L2 full of dirty lines,
// which this copy writes back as it evicts them; the JSON says how many launches ran before.
TEST(Cli, RunAfterRotatingLaunchesWritesBackTheirDirtyLines) {
  const std::string base =
      "run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/stream_copy.kir "
      "--param n=1048576 --set l2.size_bytes=4194304 --json - --l2-start ";
  auto empty = gtsim_cli(base + "empty"), rotating = gtsim_cli(base + "rotating");
  ASSERT_EQ(empty.rc, 0) << empty.err;
  ASSERT_EQ(rotating.rc, 0) << rotating.err;
  auto e = nlohmann::json::parse(empty.out), r = nlohmann::json::parse(rotating.out);
  EXPECT_EQ(e["l2_start"]["earlier_launches"].get<int>(), 0);
  EXPECT_EQ(r["l2_start"]["state"].get<std::string>(), "rotating");
  EXPECT_EQ(r["l2_start"]["earlier_launches"].get<int>(), 1);  // one 8 MiB launch fills a 4 MiB L2
  EXPECT_GT(r["dram_write_bytes"].get<double>(), e["dram_write_bytes"].get<double>() + 0.3 * 4194304);
  auto bad = gtsim_cli(base + "warm");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--l2-start"), std::string::npos) << bad.err;
}

TEST(Cli, UnknownKernelParameterIsRefused) {
  auto r = gtsim_cli("run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/stream_copy.kir --param nn=4");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("nn"), std::string::npos) << r.err;
}

TEST(Cli, FailedRunLeavesNoHalfWrittenJson) {
  fs::path out = fs::temp_directory_path() / (std::to_string(::getpid()) + "_never.json");
  auto r = gtsim_cli(
      "run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/stream_copy.kir "
      "--set hbm.bandwidth_gbps=fast --json " +
      out.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("hbm.bandwidth_gbps"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, ResolvedConfigCarriesOverridesAndRevision) {
  fs::path out = fs::temp_directory_path() / (std::to_string(::getpid()) + "_resolved.yaml");
  auto r = gtsim_cli(
      "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=65536 "
      "--set hbm.bandwidth_gbps=77 --resolved-config " +
      out.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string text = slurp(out);
  EXPECT_NE(text.find("gtsim"), std::string::npos);
  EXPECT_NE(text.find("bandwidth_gbps: 77"), std::string::npos) << text;
  EXPECT_NE(text.find("count: 2"), std::string::npos);  // teach-tiny's SM count over its A100 base
  fs::remove(out);
}

TEST(Cli, SameInputsGiveByteIdenticalStats) {
  std::string cmd =
      "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=262144 "
      "--stats --json -";
  auto a = gtsim_cli(cmd), b = gtsim_cli(cmd);
  ASSERT_EQ(a.rc, 0) << a.err;
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ja.erase("sim_wall_seconds");
  jb.erase("sim_wall_seconds");
  EXPECT_EQ(ja.dump(), jb.dump());
}

}  // namespace
}  // namespace gtsim::test

// gtsim sweep: the same grid gives byte-identical CSV on one thread, on two, as three shards joined
// by gtsim merge, and (where the build has MPI and mpirun runs) as two MPI ranks.
namespace gtsim::test {
namespace {

const std::string kSweep =
    "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=4096:32768:4096 "
    "--no-progress";

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
}

TEST(CliSweep, ThreadsAndShardsGiveTheSameBytes) {
  auto one = gtsim_cli(kSweep + " --threads 1 --csv -");
  auto two = gtsim_cli(kSweep + " --threads 2 --csv -");
  ASSERT_EQ(one.rc, 0) << one.err;
  ASSERT_EQ(two.rc, 0) << two.err;
  EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 9) << one.out;  // header + 8 points
  EXPECT_EQ(one.out, two.out);
  std::string shards;
  for (int i = 0; i < 3; ++i) {
    std::string f = tmp_path("shard" + std::to_string(i) + ".csv");
    auto r = gtsim_cli(kSweep + " --shard " + std::to_string(i) + "/3 --csv " + f);
    ASSERT_EQ(r.rc, 0) << r.err;
    shards += " " + f;
  }
  auto merged = gtsim_cli("merge" + shards);
  ASSERT_EQ(merged.rc, 0) << merged.err;
  EXPECT_EQ(merged.out, one.out);
  auto missing = gtsim_cli("merge" + shards.substr(0, shards.rfind(' ')));  // shard 2 of 3 left out
  EXPECT_EQ(missing.rc, 2) << missing.out;
  for (int i = 0; i < 3; ++i) std::filesystem::remove(tmp_path("shard" + std::to_string(i) + ".csv"));
}

TEST(CliSweep, MpiRanksGiveTheSameBytes) {
  if (std::system("mpirun --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun here";
  auto serial = gtsim_cli(kSweep + " --csv -");
  ASSERT_EQ(serial.rc, 0) << serial.err;
  std::string f = tmp_path("mpi.csv");
  std::string cmd = std::string("cd ") + GTSIM_SOURCE_DIR + " && mpirun --oversubscribe --allow-run-as-root -n 2 " +
                    GTSIM_BIN + " " + kSweep + " --csv " + f + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) GTEST_SKIP() << "mpirun could not start two ranks here";
  EXPECT_EQ(slurp(f), serial.out);
  std::filesystem::remove(f);
}

TEST(CliSweep, BadAxisIsAnInputErrorAndWritesNothing) {
  std::string f = tmp_path("bad.csv");
  for (const char* axis : {"n=4096:1024", "n=abc", "nope=1:4", "n=1:4:0"}) {
    auto r = gtsim_cli("sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param " +
                       std::string(axis) + " --no-progress --csv " + f);
    EXPECT_EQ(r.rc, 2) << axis << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << axis;
    EXPECT_FALSE(std::filesystem::exists(f)) << axis;
  }
}

}  // namespace
}  // namespace gtsim::test

// Rule (issue 38): `gtsim run` labels a kernel with its own family's measured error on the config it was
// measured for, and says "not validated" where that family (or that config) has no measured point; never
// the config's blanket figure.
TEST(Cli, RunPrintsTheKernelFamilysOwnErrorNeverABlanketBand) {
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  auto chase = gtsim::test::gtsim_cli("run --hw hw_configs/h200-sxm.yaml --kernel kernels_ir/lib/pointer_chase.kir");
  ASSERT_EQ(chase.rc, 0) << chase.err;
  EXPECT_NE(first_line(chase.out).find("pointer_chase: expected error about"), std::string::npos) << chase.out;
  auto softmax =
      gtsim::test::gtsim_cli("run --hw hw_configs/h200-sxm.yaml --kernel kernels_ir/lib/softmax_rows.kir --json -");
  ASSERT_EQ(softmax.rc, 0) << softmax.err;
  auto j = nlohmann::json::parse(softmax.out);
  EXPECT_EQ(j["validation"]["family"], "softmax");
  EXPECT_TRUE(j["validation"]["family_error_pct"].is_number());
  // no A100 was measured: its label says so (a100-80gb inherits a100-40gb's section through base:)
  auto a100 = gtsim::test::gtsim_cli("run --hw hw_configs/a100-80gb.yaml --kernel kernels_ir/lib/pointer_chase.kir");
  ASSERT_EQ(a100.rc, 0) << a100.err;
  EXPECT_NE(first_line(a100.out).find("pointer_chase: not validated"), std::string::npos) << a100.out;
  EXPECT_EQ(first_line(a100.out).find("expected error"), std::string::npos) << a100.out;
}

// A --set that changes the machine (not just its validation section) makes a machine nobody measured:
// the label says what it was derived from and by what, and carries no error figure.
TEST(Cli, RunWithAMachineChangingSetIsDerivedNotValidated) {
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  auto r = gtsim::test::gtsim_cli(
      "run --hw hw_configs/h200-sxm.yaml --kernel kernels_ir/lib/stream_copy.kir --set l2.size_bytes=1048576");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(
      first_line(r.out).find("config derived from a calibrated config by --set l2.size_bytes=1048576: not validated"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(first_line(r.out).find("expected error"), std::string::npos) << r.out;
  auto j = gtsim::test::gtsim_cli(
      "run --hw hw_configs/h200-sxm.yaml --kernel kernels_ir/lib/stream_copy.kir --set l2.size_bytes=1048576 --json -");
  ASSERT_EQ(j.rc, 0) << j.err;
  auto v = nlohmann::json::parse(j.out)["validation"];
  EXPECT_EQ(v["status"], "derived");
  EXPECT_TRUE(v["family_error_pct"].is_null());
  EXPECT_TRUE(v["error_band_pct"].is_null());
}

// A config file is the validated machine only when its values are a shipped config's: a byte-for-byte
// copy keeps the label, a copy with another value and a `base:` child under another name are derived
// (issue 39 item 5), GPU and TPU alike.
TEST(Cli, ACopyWithOtherValuesOrABaseChildIsDerivedAnIdenticalCopyIsNot) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gtsim_label_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string src = GTSIM_SOURCE_DIR;
  auto write = [&](const std::string& name, std::string text, const std::string& from = "",
                   const std::string& to = "") {
    if (!from.empty()) {
      size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto label = [](const std::string& hw, const std::string& kernel) {
    auto r = gtsim::test::gtsim_cli("run --hw " + hw + " --kernel kernels_ir/lib/" + kernel + " --json -");
    EXPECT_EQ(r.rc, 0) << r.err;
    return r.rc == 0 ? nlohmann::json::parse(r.out)["validation"] : nlohmann::json();
  };
  const std::string h200 = gtsim::test::slurp(src + "/hw_configs/h200-sxm.yaml"),
                    v5e = gtsim::test::slurp(src + "/hw_configs/tpu-v5e.yaml");
  auto same = label(write("same.yaml", h200), "stream_copy.kir");
  EXPECT_EQ(same["status"], "calibrated") << same;
  EXPECT_TRUE(same["family_error_pct"].is_number()) << same;
  auto other = label(write("other.yaml", h200, "bandwidth_gbps: ", "bandwidth_gbps: 1"), "stream_copy.kir");
  EXPECT_EQ(other["status"], "derived") << other;
  EXPECT_EQ(other["derived_from"], "calibrated") << other;
  EXPECT_NE(other.value("derived_by", "").find("hbm.bandwidth_gbps"), std::string::npos) << other;
  EXPECT_TRUE(other["family_error_pct"].is_null()) << other;
  auto child =
      label(write("child.yaml", "base: " + src + "/hw_configs/a100-40gb.yaml\nname: my-a100\nsm:\n  count: 54\n"),
            "stream_copy.kir");
  EXPECT_EQ(child["status"], "derived") << child;
  EXPECT_NE(child.value("derived_by", "").find("my-a100"), std::string::npos) << child;
  auto tpu = label(write("v5e.yaml", v5e, "overhead_us: ", "overhead_us: 1"),
                   "tpu_matmul.kir --param M=1024 --param N=1024 --param K=1024");
  EXPECT_EQ(tpu["status"], "derived") << tpu;
  EXPECT_EQ(tpu["derived_from"], "fitted") << tpu;
  fs::remove_all(dir);
}
