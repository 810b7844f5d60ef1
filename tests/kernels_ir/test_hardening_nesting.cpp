// Hardening: deep or long kernel input is refused with a clear error at the token that crosses the
// nesting limit (kernels_ir/parser.hpp, kMaxNesting), never a stack overflow; input at the limit
// still parses, verifies, builds and prints.
#include <gtest/gtest.h>

#include <string>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "kernels_ir/printer.hpp"
#include "kernels_ir/verifier.hpp"

namespace gtsim::ir {
namespace {

const char* const kTooDeep = "expression nested deeper than 256 levels, expected at most 256 (split it with let)";
const char* const kStmtTooDeep = "statements nested deeper than 256 levels (if, loop, else if), expected at most 256";

// The first diagnostic of the InputError the parser throws (a failed expectation when none).
Diagnostic parse_error(const std::string& text) {
  try {
    parse_kernel_string(text, "deep.kir");
  } catch (const InputError& e) {
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "the parser accepted the kernel";
  return {};
}

std::string kernel_with_let(const std::string& value) {
  return "kernel k(A = 3) {\n  grid 1\n  block 32\n  let x = " + value + "\n}\n";
}

// Parses, verifies, builds and round-trips through the printer: every later tree walk survives.
void accepts(const std::string& text) {
  auto k = parse_kernel_string(text, "deep.kir");
  EXPECT_TRUE(verify(*k).empty());
  EXPECT_NO_THROW(Program::build(*k, {}));
  auto again = parse_kernel_string(print_kernel(*k), "printed.kir");
  EXPECT_TRUE(*again == *k);
}

TEST(KernelParserNesting, TwentyThousandParenthesesAreAnErrorAtThe257thNotACrash) {
  auto d = parse_error(kernel_with_let(std::string(20000, '(') + "A" + std::string(20000, ')')));
  EXPECT_EQ(d.pos.file, "deep.kir");
  EXPECT_EQ(d.pos.line, 4);
  EXPECT_EQ(d.pos.col, 11 + 256);  // "  let x = " then the 257th '('
  EXPECT_NE(d.message.find(kTooDeep), std::string::npos) << d.message;
}

TEST(KernelParserNesting, ParenthesesAtTheLimitAreAccepted) {
  accepts(kernel_with_let(std::string(kMaxNesting, '(') + "A" + std::string(kMaxNesting, ')')));
}

TEST(KernelParserNesting, TwentyThousandUnaryMinusesAreAnErrorNotACrash) {
  auto d = parse_error(kernel_with_let(std::string(20000, '-') + "A"));
  EXPECT_EQ(d.pos.line, 4);
  EXPECT_EQ(d.pos.col, 11 + 256);
  EXPECT_NE(d.message.find(kTooDeep), std::string::npos) << d.message;
}

TEST(KernelParserNesting, DeepFunctionCallsAndIndicesAreAnErrorNotACrash) {
  std::string calls;
  for (int i = 0; i < 5000; ++i) calls += "min(1, ";
  calls += "A" + std::string(5000, ')');
  EXPECT_NE(parse_error(kernel_with_let(calls)).message.find(kTooDeep), std::string::npos);
}

TEST(KernelParserNesting, FlatFiftyThousandTermSumIsRefusedAtTheOperatorThatCrossesTheLimit) {
  std::string sum = "A";
  for (int i = 1; i < 50000; ++i) sum += " + A";
  auto d = parse_error(kernel_with_let(sum));
  EXPECT_EQ(d.pos.line, 4);
  // "  let x = A" then " + A" per term: the k-th '+' is at column 13 + 4 (k - 1); the 256th makes the
  // left-deep tree 257 levels deep.
  EXPECT_EQ(d.pos.col, 13 + 4 * 255);
  EXPECT_NE(d.message.find(kTooDeep), std::string::npos) << d.message;
}

TEST(KernelParserNesting, SumOf256TermsIsAccepted) {
  std::string sum = "A";
  for (int i = 1; i < kMaxNesting; ++i) sum += " + A";
  accepts(kernel_with_let(sum));
}

TEST(KernelParserNesting, RightNestedChainCountsTreeDepth) {
  std::string e;  // A - (A - (A - ...)): brackets and operators together
  for (int i = 0; i < 300; ++i) e += "A - (";
  e += "A" + std::string(300, ')');
  EXPECT_NE(parse_error(kernel_with_let(e)).message.find(kTooDeep), std::string::npos);
}

std::string nested_ifs(int n) {
  std::string s = "kernel k(A = 3) {\n  grid 1\n  block 32\n";
  for (int i = 0; i < n; ++i) s += "if (A > 1) {\n";
  s += "x = iadd x, 1\n";
  for (int i = 0; i < n; ++i) s += "}\n";
  return s + "}\n";
}

TEST(KernelParserNesting, FiveThousandNestedIfsAreAnErrorAtThe257thNotACrash) {
  auto d = parse_error(nested_ifs(5000));
  EXPECT_EQ(d.pos.file, "deep.kir");
  EXPECT_EQ(d.pos.line, 4 + 256);  // the 257th if
  EXPECT_EQ(d.pos.col, 12);        // its '{'
  EXPECT_NE(d.message.find(kStmtTooDeep), std::string::npos) << d.message;
}

TEST(KernelParserNesting, IfsAtTheLimitAreAccepted) { accepts(nested_ifs(kMaxNesting)); }

TEST(KernelParserNesting, FiveThousandNestedLoopsAreAnErrorNotACrash) {
  std::string s = "kernel k() {\n  grid 1\n  block 32\n";
  for (int i = 0; i < 5000; ++i) s += "loop i" + std::to_string(i) + " in 0 .. 2 {\n";
  s += std::string(5000, '}') + "\n}\n";
  auto d = parse_error(s);
  EXPECT_EQ(d.pos.line, 4 + 256);
  EXPECT_NE(d.message.find(kStmtTooDeep), std::string::npos) << d.message;
}

TEST(KernelParserNesting, LongElseIfChainIsAnErrorNotACrash) {
  std::string s = "kernel k(A = 3) {\n  grid 1\n  block 32\n  if (A == 0) {\n  }";
  for (int i = 1; i < 5000; ++i) s += " else if (A == " + std::to_string(i) + ") {\n  }";
  s += "\n}\n";
  EXPECT_NE(parse_error(s).message.find(kStmtTooDeep), std::string::npos);
}

}  // namespace
}  // namespace gtsim::ir
