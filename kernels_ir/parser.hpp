// Text -> Kernel. One kernel per file. Errors: gtsim::InputError with file:line:col.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kernels_ir/ast.hpp"

namespace gtsim::ir {

std::unique_ptr<Kernel> parse_kernel_file(const std::string& path);
// `name` is the file name used in diagnostics.
std::unique_ptr<Kernel> parse_kernel_string(std::string_view text, const std::string& name = "<string>");

}  // namespace gtsim::ir
