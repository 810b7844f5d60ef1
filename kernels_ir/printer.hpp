// Kernel -> text, canonical form. parse_kernel_string(print_kernel(k)) == k (structurally).
#pragma once

#include <string>

#include "kernels_ir/ast.hpp"

namespace gtsim::ir {

std::string print_kernel(const Kernel& k);
std::string print_expr(const Expr& e);
std::string print_instr(const Instr& in);  // one line, without indentation

}  // namespace gtsim::ir
