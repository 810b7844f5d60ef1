// The committed inputs the validation tests read: the H200 measurements, the calibrated config and
// the IR kernels, under the source tree (GTSIM_SOURCE_DIR, set by tests/validation/CMakeLists.txt).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#ifndef GTSIM_SOURCE_DIR
#error "GTSIM_SOURCE_DIR must name the source tree (tests/validation/CMakeLists.txt defines it)"
#endif

namespace gtsim::validation::fixture {
inline const std::string kSrc = GTSIM_SOURCE_DIR;
inline const std::string kData = kSrc + "/validation/data/h200";
inline const std::string kHw = kSrc + "/hw_configs/h200-sxm.yaml";
inline const std::string kKernels = kSrc + "/kernels_ir/lib";

// A committed file's whole text ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace gtsim::validation::fixture
