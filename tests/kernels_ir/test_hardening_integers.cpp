// Hardening: integer literals are range-checked, and constant evaluation (kernel header values,
// folded constants, the TPU dialect's expansion) reports overflow, division by zero, INT64_MIN / -1
// and bad shift counts at the operator instead of wrapping or trapping (SIGFPE).
#include <gtest/gtest.h>

#include <string>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "kernels_ir/tpu_dialect.hpp"
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

// Fuzz finding F1 (fuzz/FINDINGS.md): a loop whose trips all expand alike was still evaluated trip by
// trip before being folded into one `loop N`, so 8 x 1,000,000 syncs took ~4 million evaluations to
// reach the budget error. The budget still counts every trip, but a body that never reads its loop
// variable is expanded once: the error comes from the loop whose trips multiply past the budget.
TEST(TpuExpansion, LoopInvariantBodyIsExpandedOnceAndChargedForEveryTrip) {
  auto ds =
      problems("tpu_kernel slow() {\n  loop s in 0 .. 8 {\n    loop f in 0 .. 1000000 {\n      sync\n    }\n  }\n}\n");
  EXPECT_TRUE(has(ds, 2, 3, "expands to more than 4194304 instructions"));
  // 4 x 1,000,000 trips of one instruction is 4,000,003 charged: under the budget, and still one loop
  auto k = parse_kernel_string(
      "tpu_kernel ok() {\n  loop s in 0 .. 4 {\n    loop f in 0 .. 1000000 {\n      sync\n    }\n  }\n}\n", "ints.kir");
  std::vector<Diagnostic> d;
  TpuProgram p = expand_tpu(*k, {}, d);
  ASSERT_TRUE(d.empty()) << d.at(0).str();
  ASSERT_EQ(p.ops.size(), 5u);  // loop 4, loop 1000000, sync, end, end
  EXPECT_EQ(p.ops[0].kind, TpuOpKind::kLoop);
  EXPECT_EQ(p.ops[0].count, 4u);
  EXPECT_EQ(p.ops[1].kind, TpuOpKind::kLoop);
  EXPECT_EQ(p.ops[1].count, 1000000u);
  EXPECT_EQ(p.ops[2].kind, TpuOpKind::kSync);
}

TEST(TpuExpansion, TripsThatReadTheLoopVariableAreStillExpandedOneByOne) {
  // the rows depend on i: three different trips, unrolled; the loop variable shadows the parameter
  // of the same name inside the body only
  auto k = parse_kernel_string(
      "tpu_kernel t(i = 7) {\n  vmem V : bf16[8, 128]\n  loop i in 0 .. 3 {\n    vpu.add V[0], i + 1, 128\n  }\n"
      "  vpu.add V[0], i, 128\n}\n",
      "ints.kir");
  std::vector<Diagnostic> d;
  TpuProgram p = expand_tpu(*k, {}, d);
  ASSERT_TRUE(d.empty()) << d.at(0).str();
  ASSERT_EQ(p.ops.size(), 4u);
  for (size_t j = 0; j < 4; ++j) {
    EXPECT_EQ(p.ops[j].kind, TpuOpKind::kVector);
    EXPECT_EQ(p.ops[j].rows, j < 3 ? j + 1 : 7u);
  }
}

TEST(KernelLaunchShape, ThreadCountAbove64BitsSaturatesInsteadOfWrappingPastTheLimit) {
  // 2^22 x 2^22 x 2^20 threads is 2^64: wrapped, it read as 0 threads and passed the per-CTA limit
  EXPECT_EQ((Dim3{4194304, 4194304, 1048576}.count()), UINT64_MAX);
  EXPECT_EQ((Dim3{4294967295u, 4294967295u, 1}.count()), 18446744065119617025ull);
  auto k = parse_kernel_string("kernel k() {\n  grid 1\n  block 4194304, 4194304, 1048576\n}\n", "ints.kir");
  VerifyLimits lim;
  auto ds = verify(*k, &lim);
  EXPECT_TRUE(has(ds, 3, 9, "block of more than 2^64 threads exceeds the machine's 1024 threads per CTA"));
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
