// `cmake --install` gives a gtsim that runs from anywhere: the binary finds its kernel library,
// workloads and configs under <prefix>/share/gtsim (sim/data_dir.hpp), also after the whole tree
// is moved, with the working folder elsewhere and the source tree not consulted first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/cli/cli_harness.hpp"

#ifndef GTSIM_BUILD_DIR  // tests/cli/CMakeLists.txt sets it; else the binary's build tree
#define GTSIM_BUILD_DIR ""
#endif

namespace gtsim::test {
namespace {
namespace fs = std::filesystem;

fs::path build_dir() {
  std::string d = GTSIM_BUILD_DIR;
  return d.empty() ? fs::path(GTSIM_BIN).parent_path().parent_path() : fs::path(d);
}

// Runs a shell command from / (GTSIM_DATA unset), capturing stdout and stderr.
CliResult sh(const std::string& cmd, const fs::path& scratch) {
  fs::path out = scratch / "out.txt", err = scratch / "err.txt";
  std::string full = "cd / && env -u GTSIM_DATA " + cmd + " >" + out.string() + " 2>" + err.string();
  int status = std::system(full.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

class Install : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = fs::temp_directory_path() / ("gtsim_install_" + std::to_string(::getpid()));
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
    fs::path first = scratch_ / "prefix";
    auto r = sh("cmake --install " + build_dir().string() + " --prefix " + first.string(), scratch_);
    install_rc_ = r.rc;
    install_log_ = r.out + r.err;
    // Moved as a whole: nothing may depend on where it was installed.
    if (r.rc == 0) fs::rename(first, scratch_ / "moved");
    prefix_ = scratch_ / "moved";
  }
  static void TearDownTestSuite() { fs::remove_all(scratch_); }
  void SetUp() override { ASSERT_EQ(install_rc_, 0) << install_log_; }
  static std::string bin() { return (prefix_ / "bin" / "gtsim").string(); }
  static std::string share(const std::string& rel) { return (prefix_ / "share" / "gtsim" / rel).string(); }

  static inline fs::path scratch_, prefix_;
  static inline int install_rc_ = -1;
  static inline std::string install_log_;
};

TEST_F(Install, PutsTheBinaryAndItsDataUnderThePrefix) {
  EXPECT_TRUE(fs::is_regular_file(bin()));
  for (const char* rel : {"kernels_ir/lib/stream_copy.kir", "kernels_ir/lib/flash_attention_fwd.kir",
                          "kernels_ir/lib/gemm_persistent.kir", "kernels_ir/workloads/attention_flash.yaml",
                          "hw_configs/a100-40gb.yaml", "hw_configs/teach-tiny.yaml", "validation/data/h200"})
    EXPECT_TRUE(fs::exists(share(rel))) << rel;
}

TEST_F(Install, MovedBinaryRunsTheReadmeDemoFromAnotherFolder) {
  // scripts/demo.sh's command, from /
  auto r = sh(bin() + " run --hw " + share("hw_configs/a100-40gb.yaml") + " --kernel " +
                  share("kernels_ir/lib/gemm_tiled.kir") + " --param M=2048 --param N=2048 --param K=2048",
              scratch_);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("gtsim run: gemm_tiled"), std::string::npos) << r.out;
}

TEST_F(Install, MovedBinaryRunsAKernelToJson) {
  auto r = sh(bin() + " run --hw " + share("hw_configs/a100-40gb.yaml") + " --kernel " +
                  share("kernels_ir/lib/stream_copy.kir") + " --param n=4096 --json -",
              scratch_);
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["kernel"], "stream_copy");
}

TEST_F(Install, MovedBinaryRunsAWorkloadWhoseKernelsItFindsItself) {
  // attention_flash lowers to the library's flash-attention kernels (models/analytic/workload_run.cpp)
  auto r = sh(bin() + " workload --hw " + share("hw_configs/teach-tiny.yaml") + " --workload " +
                  share("kernels_ir/workloads/attention_flash.yaml") + " --json -",
              scratch_);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("flash_attention_fwd"), std::string::npos) << r.out.substr(0, 2000);
}

TEST_F(Install, TheInstalledLibraryIsTheOneUsedNotTheSourceTree) {
  // A copy of the binary beside a library whose flash-attention kernel is broken: the workload
  // fails on that file, so the kernels come from <bin>/../share/gtsim, not from the source tree.
  fs::path other = scratch_ / "other";
  fs::create_directories(other / "bin");
  fs::create_directories(other / "share" / "gtsim" / "kernels_ir");
  fs::copy_file(bin(), other / "bin" / "gtsim");
  fs::permissions(other / "bin" / "gtsim", fs::perms::owner_all);
  fs::copy(share("kernels_ir/lib"), other / "share" / "gtsim" / "kernels_ir" / "lib", fs::copy_options::recursive);
  fs::path broken = other / "share" / "gtsim" / "kernels_ir" / "lib" / "flash_attention_fwd.kir";
  std::ofstream(broken, std::ios::trunc) << "kernel broken(\n";
  auto r = sh((other / "bin" / "gtsim").string() + " workload --hw " + share("hw_configs/teach-tiny.yaml") +
                  " --workload " + share("kernels_ir/workloads/attention_flash.yaml"),
              scratch_);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(broken.string() + ":"), std::string::npos) << r.err;
}

TEST_F(Install, GtsimDataNamesTheDataFolderAndABadOneIsAClearError) {
  auto ok = sh("GTSIM_DATA=" + share("") + " " + bin() + " workload --hw " + share("hw_configs/teach-tiny.yaml") +
                   " --workload " + share("kernels_ir/workloads/attention_flash.yaml"),
               scratch_);
  EXPECT_EQ(ok.rc, 0) << ok.err;
  auto bad = sh("GTSIM_DATA=/no/such/gtsim " + bin() + " workload --hw " + share("hw_configs/teach-tiny.yaml") +
                    " --workload " + share("kernels_ir/workloads/attention_flash.yaml"),
                scratch_);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("GTSIM_DATA=/no/such/gtsim: no kernels_ir/lib in this folder"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace gtsim::test
