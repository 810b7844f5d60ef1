// Runs the gtsim executable and captures stdout, stderr and the exit code.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace gtsim::test {

struct CliResult {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline CliResult gtsim_cli(const std::string& args) {
  static int n = 0;
  auto dir = std::filesystem::temp_directory_path();
  std::string tag = std::to_string(::getpid()) + "_" + std::to_string(n++);
  auto out = dir / ("gtsim_out_" + tag), err = dir / ("gtsim_err_" + tag);
  std::string cmd = std::string("cd ") + GTSIM_SOURCE_DIR + " && " + GTSIM_BIN + " " + args + " >" + out.string() +
                    " 2>" + err.string();
  int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace gtsim::test
