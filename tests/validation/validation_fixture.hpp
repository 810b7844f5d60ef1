// The committed inputs the validation tests read: the H200 measurements, the calibrated config and
// the IR kernels, under the source tree (GTSIM_SOURCE_DIR, set by tests/validation/CMakeLists.txt).
#pragma once

#include <string>

#ifndef GTSIM_SOURCE_DIR
#error "GTSIM_SOURCE_DIR must name the source tree (tests/validation/CMakeLists.txt defines it)"
#endif

namespace gtsim::validation::fixture {
inline const std::string kSrc = GTSIM_SOURCE_DIR;
inline const std::string kData = kSrc + "/validation/data/h200";
inline const std::string kHw = kSrc + "/hw_configs/h200-sxm.yaml";
inline const std::string kKernels = kSrc + "/kernels_ir/lib";
}  // namespace gtsim::validation::fixture
