// What `gtsim check` does with each kind of file.
#pragma once

#include <string>

namespace gtsim::cli {

// Throws InputError with every problem found in the file (a kernel, a machine config or a workload).
void check_file(const std::string& path);

}  // namespace gtsim::cli
