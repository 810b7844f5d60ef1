// Text -> Kernel. One kernel per file. Errors: gtsim::InputError with file:line:col.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kernels_ir/ast.hpp"

namespace gtsim::ir {

// The deepest nesting the parsers accept (kernel expressions and statements here, workload
// expressions in graph/expr.cpp): every later pass walks the trees recursively, so the limit bounds
// their stack use. It counts tree depth, not only brackets: `(` `[` function calls and unary
// operators each add a level, and so does every binary operator of a chain (`a + b + c + ...` is a
// left-deep tree: at most kMaxNesting operators deep), as do nested if / loop / else-if statements.
// Deeper input is an InputError at the token that crosses the limit ("split it with let").
inline constexpr int kMaxNesting = 256;

std::unique_ptr<Kernel> parse_kernel_file(const std::string& path);
// `name` is the file name used in diagnostics.
std::unique_ptr<Kernel> parse_kernel_string(std::string_view text, const std::string& name = "<string>");

}  // namespace gtsim::ir
