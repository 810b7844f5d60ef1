// Where gtsim's data lives: the kernel library (kernels_ir/lib), the workloads, the machine configs
// and the measured data (validation/data). The binary may run from its build tree or be installed
// (`cmake --install`, then moved anywhere): nothing depends on where it was built.
#pragma once

#include <string>

namespace gtsim {

// The folder that holds kernels_ir/lib, found in this order:
//   1. $GTSIM_DATA, when set (it must hold kernels_ir/lib);
//   2. <folder of the running executable>/../share/gtsim (an installed or moved tree), when it holds
//      kernels_ir/lib;
//   3. the source tree the binary was built from, when it still exists.
// Throws InputError saying where it looked and to set GTSIM_DATA when none fits.
std::string data_dir();

// data_dir() / rel, e.g. data_path("kernels_ir/lib/stream_copy.kir").
std::string data_path(const std::string& rel);

}  // namespace gtsim
