// Hardening: integer literals are range-checked, and constant evaluation (kernel header values,
// folded constants, the TPU dialect's expansion) reports overflow, division by zero, INT64_MIN / -1
// and bad shift counts at the operator instead of wrapping or trapping (SIGFPE).
#include <gtest/gtest.h>

#include <string>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "kernels_ir/verifier.hpp"

namespace gtsim::ir {
namespace {

// The diagnostics verify() reports for `text` (the parse must succeed).
std::vector<Diagnostic> problems(const std::string& text) {
  auto k = parse_kernel_string(text, "ints.kir");
  return verify(*k);
}

// True when some diagnostic is at line:col and contains `what`.
::testing::AssertionResult has(const std::vector<Diagnostic>& ds, int line, int col, const std::string& what) {
  std::string all;
  for (const auto& d : ds) {
    if (d.pos.file == "ints.kir" && d.pos.line == line && d.pos.col == col && d.message.find(what) != std::string::npos)
      return ::testing::AssertionSuccess();
    all += d.str() + "\n";
  }
  return ::testing::AssertionFailure() << "no diagnostic at " << line << ":" << col << " with \"" << what
                                       << "\"; got:\n"
                                       << all;
}

std::string tpu_kernel(const std::string& lets) {
  return "tpu_kernel t() {\n  vmem V : bf16[8, 128]\n" + lets + "  vpu.add V[0], 8, 128\n}\n";
}

TEST(TpuConstEval, Int64MinDividedByMinusOneIsAnErrorNotSigfpe) {
  auto ds = problems(tpu_kernel("  let m = -9223372036854775807 - 1\n  let q = m / -1\n"));
  EXPECT_TRUE(has(ds, 4, 13, "-9223372036854775808 / -1 overflows a 64-bit integer"));
}

TEST(TpuConstEval, Int64MinModuloMinusOneIsAnErrorNotSigfpe) {
  auto ds = problems(tpu_kernel("  let m = -9223372036854775807 - 1\n  let q = m % -1\n"));
  EXPECT_TRUE(has(ds, 4, 13, "-9223372036854775808 % -1 overflows a 64-bit integer"));
}

TEST(TpuConstEval, OverflowDivisionByZeroAndShiftsAreErrorsAtTheOperator) {
  EXPECT_TRUE(has(problems(tpu_kernel("  let q = 9223372036854775807 + 1\n")), 3, 31, "overflows a 64-bit integer"));
  EXPECT_TRUE(has(problems(tpu_kernel("  let q = 4611686018427387904 * 2\n")), 3, 31, "overflows a 64-bit integer"));
  EXPECT_TRUE(has(problems(tpu_kernel("  let z = 0\n  let q = 5 % z\n")), 4, 13, "division by zero"));
  EXPECT_TRUE(has(problems(tpu_kernel("  let q = 1 << 64\n")), 3, 13, "expected a shift count of 0 .. 63"));
  EXPECT_TRUE(has(problems(tpu_kernel("  let q = 1 >> -1\n")), 3, 13, "expected a shift count of 0 .. 63"));
}

TEST(TpuConstEval, SelectEvaluatesOnlyThePickedOperand) {
  EXPECT_TRUE(
      problems(tpu_kernel("  let z = 0\n  let q = select(z != 0, 8 / z, 1)\n  let r = z != 0 && 8 / z > 1\n")).empty());
}

TEST(TpuExpansion, LoopNearInt64MaxEndsAndLongEmptyLoopsAreBounded) {
  // i + step would overflow past hi: the loop must end, not wrap and run forever
  EXPECT_TRUE(problems(tpu_kernel("  loop i in 9223372036854775800 .. 9223372036854775807 step 4 {\n  }\n")).empty());
  auto ds = problems(tpu_kernel("  loop i in 0 .. 9223372036854775807 {\n  }\n"));
  EXPECT_TRUE(has(ds, 3, 3, "expands to more than"));
}

TEST(KernelLiterals, LiteralAboveInt64MaxIsAnErrorNamingTheLiteralAndTheRange) {
  try {
    parse_kernel_string("kernel k() {\n  grid 18446744073709551617\n  block 32\n}\n", "ints.kir");
    FAIL() << "2^64 + 1 was accepted";
  } catch (const InputError& e) {
    const Diagnostic& d = e.diagnostics().at(0);
    EXPECT_EQ(d.pos.str(), "ints.kir:2:8");
    EXPECT_NE(d.message.find("integer literal 18446744073709551617 is out of range, expected 0 .. 9223372036854775807"),
              std::string::npos)
        << d.message;
  }
  EXPECT_THROW(parse_kernel_string("kernel k() {\n  grid 0x10000000000000000\n}\n", "ints.kir"), InputError);
  EXPECT_THROW(parse_kernel_string("kernel k() {\n  grid 9223372036854775808\n}\n", "ints.kir"), InputError);
  EXPECT_NO_THROW(parse_kernel_string("kernel k() {\n  grid 9223372036854775807\n}\n", "ints.kir"));
}

TEST(KernelConstEval, OverflowingGridIsAnErrorNotAWrap) {
  // 2^62 * 4 wraps to 0 and 2^32 * 2^32 + 1 to 1 in 64-bit registers; as constants they are errors.
  auto ds = problems("kernel k() {\n  grid 4611686018427387904 * 4\n  block 32\n}\n");
  EXPECT_TRUE(has(ds, 2, 28, "4611686018427387904 * 4 overflows a 64-bit integer"));
  ds = problems("kernel k() {\n  grid 4294967296 * 4294967296 + 1\n  block 32\n}\n");
  EXPECT_TRUE(has(ds, 2, 19, "4294967296 * 4294967296 overflows a 64-bit integer"));
  ds = problems("kernel k(N = 64) {\n  grid 1 << N\n  block 32\n}\n");
  EXPECT_TRUE(has(ds, 2, 10, "expected a shift count of 0 .. 63"));
  EXPECT_THROW(
      Program::build(*parse_kernel_string("kernel k() {\n  grid 4611686018427387904 * 4\n  block 32\n}\n"), {}),
      InputError);
}

TEST(KernelConstEval, LoopBoundsAndHeaderValuesAreRangeChecked) {
  auto ds = problems(
      "kernel k() {\n  grid 1\n  block 32\n  loop i in 0 .. 3037000500 * 3037000500 {\n    x = iadd x, 1\n  }\n}\n");
  EXPECT_TRUE(has(ds, 4, 29, "overflows a 64-bit integer"));
  ds = problems("kernel k() {\n  grid 1\n  block 32\n  regs 4294967297\n}\n");
  EXPECT_TRUE(has(ds, 4, 8, "regs 4294967297 is out of range"));
  ds = problems("kernel k() {\n  grid 1\n  block 32\n  buffer a : f32[1048576, 1048576, 1048576, 1024]\n}\n");
  EXPECT_TRUE(has(ds, 4, 3, "buffer 'a' is larger than 2^48 bytes"));
  ds = problems("kernel k() {\n  grid 1\n  block 32\n  shared s : f32[4294967297]\n}\n");
  EXPECT_TRUE(has(ds, 4, 18, "shared array 's' of 4294967297 elements"));
}

TEST(KernelConstEval, RunTimeValuesStillWrapLikeRegisters) {
  // Not constant (tid.x): evaluated at run time in 64-bit registers, defined and no error.
  EXPECT_TRUE(
      problems("kernel k() {\n  grid 1\n  block 32\n  let x = (tid.x - 9223372036854775807 - 2) / -1\n}\n").empty());
}

}  // namespace
}  // namespace gtsim::ir
