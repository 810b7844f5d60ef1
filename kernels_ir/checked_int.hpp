// Checked 64-bit integer arithmetic for compile-time evaluation: kernel header values and constants
// folded when a Program is built (exec/compile.cpp), and the TPU dialect's expansion (tpu_dialect.cpp).
// A result that does not fit in int64_t, a division or remainder by zero, INT64_MIN / -1 (and % -1)
// and a shift by a count outside 0 .. 63 are reported, never wrapped: the caller turns the reason into
// an InputError at the operator's position. Run-time evaluation (exec/eval.cpp, scalar_op) instead
// wraps like the hardware's 64-bit registers and defines x / 0 = x % 0 = 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels_ir/ast.hpp"

namespace gtsim::ir {

// The value of `a OP b` (unary operators ignore b; kSelect is not handled here), or nullopt with the
// reason in *why ("9223372036854775807 + 1 overflows a 64-bit integer, expected a result within ...").
std::optional<int64_t> checked_op(ExprOp op, int64_t a, int64_t b, std::string* why);

}  // namespace gtsim::ir
