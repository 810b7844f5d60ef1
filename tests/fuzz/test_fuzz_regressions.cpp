// Rule: every input that ever made a fuzz target fail (fuzz/regressions/<target>/, docs/fuzzing.md)
// now ends in success or gtsim::InputError when replayed through the same fuzz body: no crash, no
// sanitizer report (the CI's sanitizer pass runs this too), no other exception. Inputs whose fix has
// not landed yet are listed in fuzz/regressions/open.txt and skipped, with their FINDINGS.md entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.hpp"

namespace {
namespace fs = std::filesystem;

const fs::path kRegressions = fs::path(GTSIM_SOURCE_DIR) / "fuzz" / "regressions";
const char* const kTargets[] = {"kernel", "config", "workload", "tpu"};

struct Case {
  std::string target;
  fs::path file;
};

// How ctest and the failure messages name a case: "kernel/deep-nesting.kir".
void PrintTo(const Case& c, std::ostream* os) { *os << c.target << "/" << c.file.filename().string(); }

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const char* t : kTargets) {
    fs::path dir = kRegressions / t;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (auto& f : files) out.push_back({t, f});
  }
  return out;
}

// "kernel/deep-nesting.kir" entries of open.txt (text after '#' is a comment).
std::set<std::string> open_findings() {
  std::set<std::string> out;
  std::ifstream in(kRegressions / "open.txt");
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string entry;
    if (words >> entry) out.insert(entry);
  }
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int run_body(const std::string& target, const std::string& data) {
  auto bytes = reinterpret_cast<const uint8_t*>(data.data());
  if (target == "kernel") return gtsim_fuzz_kernel(bytes, data.size());
  if (target == "config") return gtsim_fuzz_config(bytes, data.size());
  if (target == "workload") return gtsim_fuzz_workload(bytes, data.size());
  return gtsim_fuzz_tpu(bytes, data.size());
}

class FuzzRegression : public ::testing::TestWithParam<Case> {};

TEST_P(FuzzRegression, ReplayEndsInSuccessOrInputErrorNeverACrash) {
  const Case& c = GetParam();
  std::string entry = c.target + "/" + c.file.filename().string();
  if (open_findings().count(entry)) GTEST_SKIP() << entry << " is an open finding (fuzz/FINDINGS.md)";
  std::string data = read(c.file);
  try {
    EXPECT_EQ(run_body(c.target, data), 0) << entry;
  } catch (const std::exception& e) {
    ADD_FAILURE() << entry << ": escaped as an exception other than InputError: " << e.what();
  } catch (...) {
    ADD_FAILURE() << entry << ": escaped as a non-standard exception";
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.target + "_" + info.param.file.filename().string();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Inputs, FuzzRegression, ::testing::ValuesIn(all_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FuzzRegression);

TEST(FuzzRegressions, OpenListNamesOnlyKeptInputs) {
  for (const auto& entry : open_findings())
    EXPECT_TRUE(fs::is_regular_file(kRegressions / entry))
        << "fuzz/regressions/open.txt names " << entry << ", which is not a file under fuzz/regressions/";
}

TEST(FuzzRegressions, EveryKeptInputBelongsToATarget) {
  for (const auto& e : fs::directory_iterator(kRegressions)) {
    if (e.is_regular_file()) continue;  // open.txt, README
    std::string t = e.path().filename().string();
    EXPECT_TRUE(std::find(std::begin(kTargets), std::end(kTargets), t) != std::end(kTargets))
        << "fuzz/regressions/" << t << "/ is not a fuzz target (kernel, config, workload, tpu)";
  }
}

// The bodies accept what the project ships: every shipped kernel, TPU kernel, config and workload
// goes through its body without an escape (the printer round trip of fuzz_kernel included).
TEST(FuzzBodies, ShippedFilesPassThroughTheirBodiesWithoutAnEscape) {
  const fs::path src(GTSIM_SOURCE_DIR);
  struct Dir {
    fs::path dir;
    std::string target;
  };
  const Dir dirs[] = {{src / "kernels_ir" / "lib", "kernel"},
                      {src / "kernels_ir" / "lib", "tpu"},
                      {src / "hw_configs", "config"},
                      {src / "kernels_ir" / "workloads", "workload"}};
  size_t n = 0;
  for (const auto& d : dirs)
    for (const auto& e : fs::directory_iterator(d.dir)) {
      std::string data = read(e.path());
      if (d.target == "config" && data.find("\nbase:") != std::string::npos) continue;  // base: is relative
      EXPECT_NO_THROW(EXPECT_EQ(run_body(d.target, data), 0)) << e.path();
      ++n;
    }
  EXPECT_GT(n, 20u);
}

}  // namespace
