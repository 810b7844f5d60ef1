#include "kernels_ir/checked_int.hpp"

#include <limits>

namespace gtsim::ir {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
const char* const kRange = ", expected a result within -9223372036854775808 .. 9223372036854775807";

std::optional<int64_t> fail(std::string* why, const std::string& msg) {
  if (why) *why = msg;
  return std::nullopt;
}

std::optional<int64_t> overflow(std::string* why, int64_t a, const char* op, int64_t b) {
  return fail(why, std::to_string(a) + " " + op + " " + std::to_string(b) + " overflows a 64-bit integer" + kRange);
}

std::optional<int64_t> divisor_check(std::string* why, int64_t a, const char* op, int64_t b) {
  if (b == 0) return fail(why, std::to_string(a) + " " + op + " 0: division by zero, expected a nonzero divisor");
  if (a == kMin && b == -1) return overflow(why, a, op, b);
  return 0;
}

std::optional<int64_t> shift_check(std::string* why, int64_t a, const char* op, int64_t b) {
  if (b < 0 || b > 63)
    return fail(why, std::to_string(a) + " " + op + " " + std::to_string(b) + ": shift by " + std::to_string(b) +
                         ", expected a shift count of 0 .. 63");
  return 0;
}

}  // namespace

std::optional<int64_t> checked_op(ExprOp op, int64_t a, int64_t b, std::string* why) {
  int64_t r = 0;
  switch (op) {
    case ExprOp::kNeg:
      if (a == kMin) return fail(why, "-(" + std::to_string(a) + ") overflows a 64-bit integer" + kRange);
      return -a;
    case ExprOp::kNot:
      return int64_t(!a);
    case ExprOp::kBitNot:
      return ~a;
    case ExprOp::kAdd:
      if (__builtin_add_overflow(a, b, &r)) return overflow(why, a, "+", b);
      return r;
    case ExprOp::kSub:
      if (__builtin_sub_overflow(a, b, &r)) return overflow(why, a, "-", b);
      return r;
    case ExprOp::kMul:
      if (__builtin_mul_overflow(a, b, &r)) return overflow(why, a, "*", b);
      return r;
    case ExprOp::kDiv:
      if (!divisor_check(why, a, "/", b)) return std::nullopt;
      return a / b;
    case ExprOp::kMod:  // INT64_MIN % -1 is refused like INT64_MIN / -1 (its quotient does not fit)
      if (!divisor_check(why, a, "%", b)) return std::nullopt;
      return a % b;
    case ExprOp::kCdiv:  // rounds toward +infinity; |a / b| <= 2^62 when |b| >= 2, so the +1 fits
      if (!divisor_check(why, a, "cdiv", b)) return std::nullopt;
      return a / b + int64_t((a % b != 0) && ((a < 0) == (b < 0)));
    case ExprOp::kShl:
      if (!shift_check(why, a, "<<", b)) return std::nullopt;
      r = int64_t(uint64_t(a) << b);
      if ((r >> b) != a) return overflow(why, a, "<<", b);
      return r;
    case ExprOp::kShr:
      if (!shift_check(why, a, ">>", b)) return std::nullopt;
      return a >> b;
    case ExprOp::kLt:
      return int64_t(a < b);
    case ExprOp::kLe:
      return int64_t(a <= b);
    case ExprOp::kGt:
      return int64_t(a > b);
    case ExprOp::kGe:
      return int64_t(a >= b);
    case ExprOp::kEq:
      return int64_t(a == b);
    case ExprOp::kNe:
      return int64_t(a != b);
    case ExprOp::kAnd:
      return a & b;
    case ExprOp::kOr:
      return a | b;
    case ExprOp::kXor:
      return a ^ b;
    case ExprOp::kLAnd:
      return int64_t(a && b);
    case ExprOp::kLOr:
      return int64_t(a || b);
    case ExprOp::kMin:
      return a < b ? a : b;
    case ExprOp::kMax:
      return a > b ? a : b;
    default:
      return fail(why, "not an arithmetic operator");
  }
}

}  // namespace gtsim::ir
