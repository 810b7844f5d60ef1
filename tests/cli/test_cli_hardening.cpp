// Hardening of the command line (fuzzing findings): output files that never replace what they point
// at, resource limits with their flags, "cannot launch" at its declaration, trace indices in range.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/cli/cli_harness.hpp"

namespace gtsim::test {
namespace {
namespace fs = std::filesystem;

const std::string kRun = "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=4096";
// Long enough for the event and time limits below (1 us, 1000 events) to fire.
const std::string kRunLonger =
    "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=65536";

// A fresh folder per test, removed at the end.
class Hardening : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gtsim_hardening_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path file(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  // Files in the test folder whose name holds ".tmp" (write_output's temporaries).
  std::vector<std::string> temporaries(const fs::path& d) const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(d))
      if (e.path().filename().string().find(".tmp") != std::string::npos) out.push_back(e.path().string());
    return out;
  }
  fs::path dir_;
};

bool is_json_object(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("cycles");
}

bool is_char_device(const fs::path& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// --- 1. output files ---------------------------------------------------------------------------

TEST_F(Hardening, JsonThroughASymlinkWritesTheFileItNamesAndKeepsTheLink) {
  fs::create_directories(dir_ / "real");
  fs::path target = file("real/result.json", "old");
  fs::path link = dir_ / "link.json";
  fs::create_symlink(target, link);
  auto r = gtsim_cli(kRun + " --json " + link.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), target);
  EXPECT_TRUE(is_json_object(slurp(target)));
  EXPECT_TRUE(temporaries(dir_).empty());
}

TEST_F(Hardening, DanglingSymlinkCreatesTheFileItNames) {
  fs::path link = dir_ / "dangling.json";
  fs::create_symlink("made.json", link);  // relative to the link's folder
  auto r = gtsim_cli(kRun + " --resolved-config " + link.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "made.json"));
  EXPECT_NE(slurp(dir_ / "made.json").find("teach-tiny"), std::string::npos);
}

TEST_F(Hardening, JsonToDevNullLeavesItACharacterDevice) {
  ASSERT_TRUE(is_char_device("/dev/null"));
  auto r = gtsim_cli(kRun + " --json /dev/null --resolved-config /dev/null");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(is_char_device("/dev/null"));
  EXPECT_TRUE(temporaries(dir_).empty());
}

TEST_F(Hardening, CharacterDeviceNodeIsWrittenInPlaceNotReplaced) {
  fs::path node = dir_ / "null";
  if (::geteuid() != 0 || ::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs root";
  auto r = gtsim_cli(kRun + " --json " + node.string());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(is_char_device(node));
  EXPECT_TRUE(temporaries(dir_).empty());
}

TEST_F(Hardening, FifoIsWrittenInPlace) {
  fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo);  // blocks until gtsim opens the FIFO for writing
    std::stringstream ss;
    ss << in.rdbuf();
    got = ss.str();
  });
  auto r = gtsim_cli(kRun + " --json " + fifo.string());
  if (r.rc != 0) std::ofstream(fifo) << "";  // let the reader finish
  reader.join();
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(is_json_object(got)) << got;
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(temporaries(dir_).empty());
}

TEST_F(Hardening, PipeThroughDevStdoutIsWritten) {
  auto r = gtsim_cli(kRun + " --json /dev/stdout");
  EXPECT_EQ(r.rc, 0) << r.err;
  // The JSON, then the text report, both on stdout.
  EXPECT_NE(r.out.find("\"cycles\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gtsim run:"), std::string::npos) << r.out;
}

TEST_F(Hardening, DirectoryIsRefusedBeforeTheRunWithAClearError) {
  auto t0 = std::chrono::steady_clock::now();
  for (const char* opt : {"--json", "--resolved-config"}) {
    auto r = gtsim_cli(kRun + " " + opt + " " + dir_.string());
    EXPECT_EQ(r.rc, 2) << opt;
    EXPECT_NE(r.err.find(dir_.string() + ": is a directory, expected a file path"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  auto s = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param "
      "n=1024:2048:1024 --no-progress --csv " +
      dir_.string());
  EXPECT_EQ(s.rc, 2);
  EXPECT_NE(s.err.find(dir_.string() + ": is a directory, expected a file path"), std::string::npos) << s.err;
  EXPECT_TRUE(fs::is_directory(dir_));
  EXPECT_TRUE(fs::is_empty(dir_));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
}

TEST_F(Hardening, UnwritableFolderNamesThePathAndTheReason) {
  // As root a mode does not stop writes; /proc refuses new files to everyone.
  bool root = ::geteuid() == 0;
  fs::path ro = dir_ / "ro";
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  fs::path out = root ? fs::path("/proc/gtsim_no_such_output.json") : ro / "r.json";
  auto r = gtsim_cli(kRun + " --json " + out.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(out.string() + ": "), std::string::npos) << r.err;
  // the reason is strerror's text
  bool reason = r.err.find("Permission denied") != std::string::npos ||
                r.err.find("No such file or directory") != std::string::npos ||
                r.err.find("Read-only file system") != std::string::npos;
  EXPECT_TRUE(reason) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(temporaries(dir_).empty());
}

TEST_F(Hardening, WriteErrorNamesThePathAndStrerror) {
  // /dev/full: a character device whose writes fail with ENOSPC.
  if (!is_char_device("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto r = gtsim_cli(kRun + " --json /dev/full");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("/dev/full: write failed: No space left on device"), std::string::npos) << r.err;
  EXPECT_TRUE(is_char_device("/dev/full"));
}

TEST_F(Hardening, MissingFolderIsRefusedBeforeTheRun) {
  fs::path out = dir_ / "no" / "such" / "r.json";
  auto r = gtsim_cli(kRun + " --json " + out.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(out.string() + ": cannot write the output file in " + (dir_ / "no" / "such").string() +
                       ": No such file or directory"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(Hardening, RegularFileIsReplacedWholeKeepingItsPermissions) {
  fs::path out = file("r.json", "old contents");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  auto r = gtsim_cli(kRun + " --json " + out.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(is_json_object(slurp(out)));
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_TRUE(temporaries(dir_).empty());
}

TEST_F(Hardening, NothingIsWrittenWhenTheSimulationFails) {
  fs::path json = dir_ / "r.json", cfg = dir_ / "c.yaml", old = file("old.json", "keep me");
  auto r = gtsim_cli(kRunLonger + " --exact --max-events 1000 --json " + json.string() + " --resolved-config " +
                     cfg.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_FALSE(fs::exists(json));
  EXPECT_FALSE(fs::exists(cfg));
  auto k = gtsim_cli(kRunLonger + " --exact --max-events 1000 --json " + old.string());
  EXPECT_EQ(k.rc, 2);
  EXPECT_EQ(slurp(old), "keep me");
  EXPECT_TRUE(temporaries(dir_).empty());
}

// --- 2. limits ---------------------------------------------------------------------------------

TEST_F(Hardening, EverySimulatingCommandTakesTheLimitFlags) {
  for (const char* sub : {"run", "workload", "compare", "sweep", "roofline", "waves", "calibrate", "validate"}) {
    auto h = gtsim_cli(std::string(sub) + " --help");
    EXPECT_EQ(h.rc, 0) << sub;
    for (const char* flag :
         {"--max-sim-seconds", "--max-events", "--max-host-seconds", "--max-memory-gib", "--max-warp-instructions"})
      EXPECT_NE(h.out.find(flag), std::string::npos) << sub << " " << flag;
  }
}

TEST_F(Hardening, SimulatedTimeLimitNamesTheValueAndTheFlag) {
  auto r = gtsim_cli(kRunLonger + " --exact --max-sim-seconds 1e-6 --json " + (dir_ / "r.json").string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("simulated time limit reached: 1e-06 s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-sim-seconds"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "r.json"));
  // raised, the same run completes
  EXPECT_EQ(gtsim_cli(kRunLonger + " --exact --max-sim-seconds 1").rc, 0);
}

TEST_F(Hardening, EventLimitNamesTheValueAndTheFlag) {
  auto r = gtsim_cli(kRunLonger + " --exact --max-events 1000");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("event limit reached: 1001 events (the limit is 1000)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-events"), std::string::npos) << r.err;
}

TEST_F(Hardening, EventLimitReachesTheKernelsOfAWorkload) {
  auto r = gtsim_cli(
      "workload --hw hw_configs/teach-tiny.yaml --workload kernels_ir/workloads/fusion_sincos.yaml --max-events 100");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--max-events"), std::string::npos) << r.err;
}

// A loop of 2^62 trips (the fuzzer's hang).
const std::string kSpin =
    "kernel spin(n = 4611686018427387904) {\n"
    "  grid 1\n"
    "  block 32\n"
    "  regs 16\n"
    "  buffer out : f32[32]\n"
    "  x = cvt n\n"
    "  loop i in 0 .. n runtime {\n"
    "    x = fadd x, x\n"
    "  }\n"
    "  st.global out[tid.x], x\n"
    "}\n";

TEST_F(Hardening, HostTimeLimitStopsARunWithinSeconds) {
  fs::path k = file("spin.kir", kSpin);
  auto t0 = std::chrono::steady_clock::now();
  auto r = gtsim_cli("run --hw hw_configs/teach-tiny.yaml --kernel " + k.string() +
                     " --exact --max-warp-instructions 1e30 --max-host-seconds 0.5");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("host time limit reached"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(the limit is 0.5 s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-host-seconds"), std::string::npos) << r.err;
  EXPECT_LT(s, 20.0);
}

TEST_F(Hardening, HugeLoopIsRefusedUpFrontByItsWorkEstimate) {
  fs::path k = file("spin.kir", kSpin);
  for (const char* mode : {"", " --exact"}) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = gtsim_cli("run --hw hw_configs/teach-tiny.yaml --kernel " + k.string() + mode);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
    EXPECT_EQ(r.rc, 2) << mode;
    // 2^62 trips of a fadd, with an iadd + setp + bra per 4 iterations: 1.75 x 2^62 = 8.07e18
    EXPECT_NE(r.err.find("work limit: kernel spin would run an estimated 8.07e+18 dynamic warp instructions"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("above the limit of 1e+12"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--max-warp-instructions"), std::string::npos) << r.err;
  }
}

TEST_F(Hardening, SampledHugeLoopEndsAtTheSimulatedTimeLimit) {
  // With the work limit raised, sampling fast-forwards the loop: its time is far past 10 s.
  fs::path k = file("spin.kir", kSpin);
  auto r = gtsim_cli("run --hw hw_configs/teach-tiny.yaml --kernel " + k.string() + " --max-warp-instructions 1e30");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("simulated time limit reached"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fast-forwarded by sampling"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-sim-seconds"), std::string::npos) << r.err;
}

TEST_F(Hardening, HugeGridIsRefusedUpFrontByItsWorkEstimate) {
  fs::path k = file("grid.kir",
                    "kernel grid3() {\n  grid 4294967295, 4294967295, 4294967295\n  block 32\n  regs 16\n"
                    "  buffer out : f32[32]\n  @(tid.x == 0) st.global out[0], one\n}\n");
  auto t0 = std::chrono::steady_clock::now();
  auto r = gtsim_cli("run --hw hw_configs/teach-tiny.yaml --kernel " + k.string() + " --exact");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("7.92e+28 CTAs"), std::string::npos) << r.err;  // (2^32 - 1)^3, not wrapped
  EXPECT_NE(r.err.find("--max-warp-instructions"), std::string::npos) << r.err;
  // Raised beyond what the model counts, it is still refused, at the grid declaration.
  auto big = gtsim_cli("run --hw hw_configs/teach-tiny.yaml --kernel " + k.string() + " --max-warp-instructions 1e40");
  EXPECT_EQ(big.rc, 2);
  EXPECT_NE(big.err.find(k.string() + ":2:8: kernel grid3: a grid of"), std::string::npos) << big.err;
  EXPECT_NE(big.err.find("the model counts at most 2^63"), std::string::npos) << big.err;
}

TEST_F(Hardening, LargeSampledStreamCopyRunsQuickly) {
  // 2^31 elements: sampled, the launch converges after a few turnovers.
  auto t0 = std::chrono::steady_clock::now();
  auto r = gtsim_cli(
      "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param "
      "n=2147483648 --json -");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ctas"], 524288);
  // --exact: 524288 CTAs x 8 warps; stopped by the host-time limit when asked
  auto e = gtsim_cli(
      "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param "
      "n=2147483648 --exact --max-host-seconds 1");
  EXPECT_EQ(e.rc, 2);
  EXPECT_NE(e.err.find("--max-host-seconds"), std::string::npos) << e.err;
}

TEST_F(Hardening, HugeL1IsRefusedUpFrontByItsMemoryEstimate) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = gtsim_cli(
      "run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=4096 "
      "--set l1.unified_kb=65536 --json " +
      (dir_ / "r.json").string());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("memory limit: the machine NVIDIA A100-SXM4-40GB would take an estimated 2.57 GiB"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("L1 tags 2.53 GiB (108 SMs x 524288 lines of l1.unified_kb)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("above the limit of 2 GiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-memory-gib"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "r.json"));
}

TEST_F(Hardening, PointerChaseChainCountsInTheMemoryEstimate) {
  // 2^40 bytes at a 16-byte stride: 2^36 nodes of 8 bytes, 512 GiB
  auto r = gtsim_cli(
      "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/pointer_chase.kir --param "
      "footprint_bytes=1099511627776 --param stride_bytes=16");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("memory limit: kernel pointer_chase on teach-tiny"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("init chase chains 512 GiB"), std::string::npos) << r.err;
}

TEST_F(Hardening, WorkLimitRefusesASweepBeforeItsCsv) {
  fs::path csv = dir_ / "s.csv";
  auto r = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param "
      "n=1024:4096:1024 --no-progress --max-warp-instructions 10 --csv " +
      csv.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("work limit: kernel stream_copy"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(csv));
}

// --- 3. cannot launch: at the declaration ------------------------------------------------------

TEST_F(Hardening, CannotLaunchPointsAtTheDeclarationResponsible) {
  // 32 warps of 255 registers (8192 per warp after rounding) need 262144 of the SM's 65536.
  fs::path regs = file("fat.kir",
                       "kernel fat() {\n  grid 1\n  block 1024\n  regs 255\n  buffer out : f32[1024]\n"
                       "  @(tid.x == 0) st.global out[0], one\n}\n");
  auto r = gtsim_cli("run --hw hw_configs/teach-tiny.yaml --kernel " + regs.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(regs.string() + ":4:8: kernel fat: cannot launch: not one CTA fits on an SM"), std::string::npos)
      << r.err;
  // 32 warps per CTA on an SM of 16 warp slots: the `block` line.
  fs::path wide = file("wide.kir",
                       "kernel wide() {\n  grid 1\n  block 1024\n  regs 16\n"
                       "  buffer out : f32[32]\n  @(tid.x == 0) st.global out[0], one\n}\n");
  auto m = gtsim_cli("run --hw hw_configs/teach-tiny.yaml --set sm.max_warps=16 --kernel " + wide.string());
  EXPECT_EQ(m.rc, 2);
  EXPECT_NE(m.err.find(wide.string() + ":3:9: kernel wide: cannot launch: not one CTA fits on an SM: 32 warps per "
                                       "CTA, the SM holds 16 warps"),
            std::string::npos)
      << m.err;
}

// --- 4. trace indices --------------------------------------------------------------------------

const std::string kTrace =
    "trace --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=4096";

TEST_F(Hardening, TraceCtaBeyond2To32IsAnErrorNotCta0) {
  auto r = gtsim_cli(kTrace + " --cta 4294967296 --warp 0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("--cta 4294967296: 4294967296 is out of range; valid: 0..0 (x within the grid (1,1,1))"),
            std::string::npos)
      << r.err;
  auto huge = gtsim_cli(kTrace + " --cta 0,99999999999999999999999");
  EXPECT_EQ(huge.rc, 2);
  EXPECT_NE(huge.err.find("is out of range; valid: 0..0 (y within the grid (1,1,1))"), std::string::npos) << huge.err;
}

TEST_F(Hardening, TraceCtaAndWarpOutsideTheLaunchAreErrorsNamingTheRange) {
  auto c = gtsim_cli(kTrace + " --cta 7");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("--cta 7: 7 is out of range; valid: 0..0"), std::string::npos) << c.err;
  auto w = gtsim_cli(kTrace + " --warp 8");
  EXPECT_EQ(w.rc, 2);
  EXPECT_NE(w.err.find("--warp 8: 8 is out of range; valid: 0..7 (the CTA's 8 warps)"), std::string::npos) << w.err;
  auto w32 = gtsim_cli(kTrace + " --warp 4294967296");
  EXPECT_EQ(w32.rc, 2);
  EXPECT_NE(w32.err.find("--warp 4294967296: 4294967296 is out of range; valid: 0..7"), std::string::npos) << w32.err;
  auto neg = gtsim_cli(kTrace + " --warp -1");
  EXPECT_EQ(neg.rc, 2);
  EXPECT_NE(neg.err.find("is not a non-negative integer"), std::string::npos) << neg.err;
  auto four = gtsim_cli(kTrace + " --cta 0,0,0,0");
  EXPECT_EQ(four.rc, 2);
  EXPECT_NE(four.err.find("at most 3 indices"), std::string::npos) << four.err;
  auto ok = gtsim_cli(kTrace + " --cta 0,0,0 --warp 7 --limit 3");
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

}  // namespace
}  // namespace gtsim::test
