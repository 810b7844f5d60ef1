// Hardening of the workload reader (kernels_ir/graph): deep or long expressions, sizes that do not
// fit, narrowing of counts, malformed numbers and unknown --param names are InputErrors at the
// workload's file:line:col, never a crash, a wrap or a silent wrong answer.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "kernels_ir/graph/passes.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "kernels_ir/parser.hpp"

using namespace gtsim;
using namespace gtsim::wl;

namespace {

// A workload with one tensor x[n] and one elementwise op whose expression is on line 7, its
// opening quote at column 11 (so the expression's character i is at column 12 + i).
std::string ew_workload(const std::string& expr) {
  return "name: w\n"
         "params: {n: 1024}\n"
         "tensors:\n"
         "  x: {dtype: f32, shape: [n]}\n"
         "ops:\n"
         "  - op: elementwise\n"
         "    expr: \"" +
         expr +
         "\"\n"
         "    out: y\n";
}

// The first diagnostic of the InputError loading `yaml` throws (a failed expectation when none).
Diagnostic load_error(const std::string& yaml, const std::map<std::string, int64_t>& params = {}) {
  try {
    Workload::load_string(yaml, "w.yaml", params);
  } catch (const InputError& e) {
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "the workload was accepted";
  return {};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(WorkloadExpression, TenThousandNestedParenthesesAreAnErrorAtThe257thNotACrash) {
  auto d = load_error(ew_workload(std::string(10000, '(') + "x" + std::string(10000, ')')));
  EXPECT_EQ(d.pos.file, "w.yaml");
  EXPECT_EQ(d.pos.line, 7);
  EXPECT_EQ(d.pos.col, 12 + 256);  // the 257th '('
  EXPECT_TRUE(contains(d.message, "nested deeper than 256 levels, expected at most 256")) << d.message;
}

TEST(WorkloadExpression, FlatFiftyThousandTermSumIsRefusedAtTheOperatorThatCrossesTheLimit) {
  std::string sum = "x";
  for (int i = 1; i < 50000; ++i) sum += " + x";
  auto t0 = std::chrono::steady_clock::now();
  auto d = load_error(ew_workload(sum));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_EQ(d.pos.line, 7);
  EXPECT_EQ(d.pos.col, 12 + 2 + 4 * 255);  // the 256th '+'
  EXPECT_TRUE(contains(d.message, "nested deeper than 256 levels")) << d.message;
}

TEST(WorkloadExpression, DeepUnaryMinusAndPowerChainsAreAnErrorNotACrash) {
  EXPECT_TRUE(
      contains(load_error(ew_workload(std::string(20000, '-') + "x")).message, "nested deeper than 256 levels"));
  std::string pow = "x";
  for (int i = 0; i < 20000; ++i) pow += "^x";
  EXPECT_TRUE(contains(load_error(ew_workload(pow)).message, "nested deeper than 256 levels"));
  std::string calls;
  for (int i = 0; i < 20000; ++i) calls += "sin(";
  EXPECT_TRUE(contains(load_error(ew_workload(calls + "x" + std::string(20000, ')'))).message,
                       "nested deeper than 256 levels"));
}

// A balanced tree of `leaves` distinct... names x: (x + x) * (x + x) ... as deep as log2(leaves).
std::string balanced(int leaves) {
  if (leaves == 1) return "x";
  return "(" + balanced(leaves / 2) + (leaves % 4 ? " + " : " * ") + balanced(leaves - leaves / 2) + ")";
}

TEST(WorkloadExpression, MoreNodesThanTheLimitIsAnErrorNamingTheLimit) {
  auto d = load_error(ew_workload(balanced(5000)));
  EXPECT_EQ(d.pos.line, 7);
  EXPECT_TRUE(contains(d.message, "more than 4096 operators and operands, expected at most 4096")) << d.message;
}

TEST(WorkloadExpression, ExpressionAtTheNodeLimitLoadsFusesAndLowersQuickly) {
  auto t0 = std::chrono::steady_clock::now();
  auto w = Workload::load_string(ew_workload(balanced(2000)), "w.yaml");
  EXPECT_EQ(w.op_count(), 1999u);  // one op per operator
  run_passes(w, PassOptions{});
  EXPECT_EQ(w.op_count(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST(WorkloadExpression, BadNumbersAreInputErrorsWithThePositionAndTheExpectedForm) {
  auto d = load_error(ew_workload("x * 1e999999"));
  EXPECT_EQ(d.pos.str(), "w.yaml:7:16");
  EXPECT_TRUE(contains(d.message, "number '1e999999' is out of range, expected a finite number")) << d.message;
  d = load_error(ew_workload("x + 1.2.3"));
  EXPECT_EQ(d.pos.str(), "w.yaml:7:16");
  EXPECT_TRUE(contains(d.message, "malformed number '1.2.3', expected digits[.digits][e[+-]digits]")) << d.message;
  d = load_error(ew_workload("x * 2e"));
  EXPECT_TRUE(contains(d.message, "malformed number '2e'")) << d.message;
  EXPECT_NO_THROW(Workload::load_string(ew_workload("x * 1e-3 + .5"), "w.yaml"));
}

TEST(WorkloadSizes, TensorOfTwoToThe80ElementsIsRefusedNamingTheTensor) {
  auto d = load_error(
      "name: w\n"
      "tensors:\n"
      "  big: {dtype: f32, shape: [1048576, 1048576, 1048576, 1024]}\n"
      "ops:\n"
      "  - {op: elementwise, expr: \"big * 2\", out: y}\n");
  EXPECT_EQ(d.pos.str(), "w.yaml:3:28");  // the shape list
  EXPECT_TRUE(contains(d.message, "tensor 'big' of shape [1048576, 1048576, 1048576, 1024] is larger than 2^48 bytes"))
      << d.message;
}

TEST(WorkloadSizes, ShapeExpressionOverflowIsAnErrorAtTheWorkloadNotAWrap) {
  auto d = load_error(
      "name: w\n"
      "params: {n: 2^40}\n"
      "tensors:\n"
      "  x: {dtype: f32, shape: [n * n]}\n"
      "ops:\n"
      "  - {op: elementwise, expr: \"x * 2\", out: y}\n");
  EXPECT_EQ(d.pos.str(), "w.yaml:4:27");  // the dimension "n * n"
  EXPECT_TRUE(contains(d.message, "1099511627776 * 1099511627776 overflows a 64-bit integer")) << d.message;
  // exact integers: 2^53 + 1 is not representable as the double the old evaluator used
  auto w = Workload::load_string(
      "name: w\nparams: {n: 2^53 + 1}\ntensors:\n  x: {dtype: f32, shape: [2, 3]}\nops:\n"
      "  - {op: elementwise, expr: \"x * 2\", out: y}\n",
      "w.yaml");
  (void)w;
}

TEST(WorkloadSizes, MatmulBeyondTwoToThe64FlopsIsRefusedAtTheOpNotAsGemm) {
  auto d = load_error(
      "name: w\n"
      "tensors:\n"
      "  a: {dtype: bf16, shape: [4194304, 8388608]}\n"
      "  b: {dtype: bf16, shape: [8388608, 4194304]}\n"
      "ops:\n"
      "  - {name: mm, op: matmul, a: a, b: b, out: c}\n");
  EXPECT_EQ(d.pos.file, "w.yaml");
  EXPECT_EQ(d.pos.line, 6);
  EXPECT_TRUE(contains(d.message, "matmul 'mm' does more than 2^64 flops")) << d.message;
  EXPECT_FALSE(contains(d.message, "--gemm"));
}

TEST(WorkloadSizes, CountOfTwoToThe32PlusOneIsAnErrorNotOne) {
  auto d = load_error(
      "name: w\n"
      "tensors:\n"
      "  x: {dtype: f32, shape: [1024]}\n"
      "ops:\n"
      "  - {name: act, op: activation, fn: sigmoid, input: x, count: 4294967297, out: y}\n");
  EXPECT_EQ(d.pos.file, "w.yaml");
  EXPECT_EQ(d.pos.line, 5);
  EXPECT_TRUE(contains(d.message, "4294967297")) << d.message;
}

TEST(WorkloadParams, UnknownParamIsAnErrorListingTheWorkloadsParameters) {
  auto d = load_error(ew_workload("x * 2"), {{"bogus", 3}});
  EXPECT_EQ(d.pos.str(), "w.yaml:2:9");  // the params: map
  EXPECT_EQ(d.message, "workload w has no parameter \"bogus\"; its parameters are: n");
  EXPECT_NO_THROW(Workload::load_string(ew_workload("x * 2"), "w.yaml", {{"n", 4096}}));
  auto none = load_error(
      "name: v\ntensors:\n  x: {dtype: f32, shape: [8]}\nops:\n  - {op: elementwise, expr: \"x * 2\", out: y}\n",
      {{"n", 3}});
  EXPECT_EQ(none.message, "workload v has no parameter \"n\"; its parameters are: (none)");
}

TEST(WorkloadParams, OverrideThatOverflowsIsAnError) {
  EXPECT_THROW(parse_param_overrides({"n=3^62"}), InputError);
  EXPECT_EQ(parse_param_overrides({"n=2^62"}).at("n"), int64_t(1) << 62);
}

// A chain of elementwise ops y_k = y_(k-1) * y_(k-1): fused naively the tree doubles per op.
TEST(WorkloadFusion, FusedTreesStayWithinTheExpressionLimits) {
  std::string yaml = "name: w\ntensors:\n  t0: {dtype: f32, shape: [1024]}\nops:\n";
  for (int k = 1; k <= 60; ++k)
    yaml += "  - {op: elementwise, expr: \"t" + std::to_string(k - 1) + " * t" + std::to_string(k - 1) + "\", out: t" +
            std::to_string(k) + "}\n";
  for (int k = 61; k <= 660; ++k)  // and a long chain: 600 ops deep
    yaml += "  - {op: elementwise, expr: \"t" + std::to_string(k - 1) + " + 1\", out: t" + std::to_string(k) + "}\n";
  auto w = Workload::load_string(yaml, "w.yaml");
  run_passes(w, PassOptions{});
  EXPECT_GT(w.op_count(), 3u);  // cut into several fused ops
  std::function<std::pair<size_t, int>(const EwExpr&)> size = [&](const EwExpr& e) {
    size_t n = 1;
    int h = 0;
    for (const auto& a : e.args) {
      auto [an, ah] = size(a);
      n += an, h = std::max(h, ah);
    }
    return std::pair<size_t, int>{n, h + 1};
  };
  for (const Op* op : w.ops_in_order())
    for (const auto& e : op->exprs) {
      auto [n, h] = size(e);
      EXPECT_LE(n, size_t(kMaxExprNodes));
      EXPECT_LE(h, ir::kMaxNesting);
    }
}

}  // namespace
