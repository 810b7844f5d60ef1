// Paths into the source tree for the tests (GTSIM_SOURCE_DIR is set by each test folder's CMakeLists.txt).
// One definition that every test file shares, so that a unity build (scripts/test.sh) sees it once.
#pragma once

#include <string>

#ifndef GTSIM_SOURCE_DIR
#error "GTSIM_SOURCE_DIR must name the source tree (the test folder's CMakeLists.txt defines it)"
#endif

namespace gtsim::testing {
// a file of the source tree, relative to its root
inline std::string src(const std::string& rel) { return std::string(GTSIM_SOURCE_DIR) + "/" + rel; }
// a shipped machine config, by file name
inline std::string cfg_path(const std::string& file) { return src("hw_configs/" + file); }
}  // namespace gtsim::testing
