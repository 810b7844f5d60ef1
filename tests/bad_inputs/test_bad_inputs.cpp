// The corpus of bad inputs (tests/bad_inputs/cases.txt): every case is a gtsim command line that
// must end with exit code 2, exactly the stderr the manifest gives (file:line:col: what is wrong,
// what was expected), nothing on stdout, and nothing written to its output folder. The promise
// itself is docs/bad_input.md.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

struct Case {
  std::string name, args, err;
  int line = 0;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// cases.txt: blocks of `case: NAME`, `run: ARGS` (relative to the source root; $OUT is an empty
// folder of the case's own) and one or more `err: LINE` (the exact stderr, line by line).
std::vector<Case> load_cases() {
  std::ifstream in(std::string(GTSIM_SOURCE_DIR) + "/tests/bad_inputs/cases.txt");
  std::vector<Case> cases;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    auto colon = line.find(": ");
    std::string key = line.substr(0, colon), value = colon == std::string::npos ? "" : line.substr(colon + 2);
    if (key == "case") {
      cases.push_back(Case{value, "", "", n});
    } else if (!cases.empty() && key == "run") {
      cases.back().args = value;
    } else if (!cases.empty() && key == "err") {
      cases.back().err += value + "\n";
    } else {
      ADD_FAILURE() << "cases.txt:" << n << ": expected `case:`, `run:` or `err:`";
    }
  }
  return cases;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, ExitsTwoWithTheExactMessageAndWritesNothing) {
  const Case& c = GetParam();
  fs::path out = fs::temp_directory_path() / ("gtsim_bad_" + std::to_string(::getpid()) + "_" + c.name);
  fs::remove_all(out);
  fs::create_directories(out);
  std::string args = c.args;
  for (size_t at; (at = args.find("$OUT")) != std::string::npos;) args.replace(at, 4, out.string());
  fs::path so = out.parent_path() / (out.filename().string() + ".stdout");
  fs::path se = out.parent_path() / (out.filename().string() + ".stderr");
  std::string cmd = std::string("cd ") + GTSIM_SOURCE_DIR + " && timeout 60 " + GTSIM_BIN +
                    " " + args + " >" + so.string() + " 2>" + se.string();
  int status = std::system(cmd.c_str());
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::string err = slurp(se), sout = slurp(so);
  for (size_t at; (at = err.find(out.string())) != std::string::npos;) err.replace(at, out.string().size(), "$OUT");
  EXPECT_EQ(rc, 2) << "cases.txt:" << c.line << ": " << c.name << "\n" << err;
  auto trimmed = [](std::string s) {  // blank lines at the end are not part of the message
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  };
  EXPECT_EQ(trimmed(err), trimmed(c.err)) << "cases.txt:" << c.line << ": " << c.name;
  EXPECT_EQ(sout, "") << "cases.txt:" << c.line << ": " << c.name << " printed on stdout";
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out)) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << "cases.txt:" << c.line << ": " << c.name << " wrote " << left.front();
  fs::remove_all(out);
  fs::remove(so);
  fs::remove(se);
}
// (No `ulimit -v` here: AddressSanitizer's shadow memory needs terabytes of address space. gtsim's own
// --max-memory-gib estimate is what bounds memory, and the cases check that it refuses up front.)

TEST(BadInputCorpus, HoldsAtLeastEightyCases) { EXPECT_GE(load_cases().size(), 80u); }

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
