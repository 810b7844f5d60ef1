#include <gtest/gtest.h>

#include <filesystem>

#include "kernels_ir/parser.hpp"
#include "kernels_ir/printer.hpp"
#include "kernels_ir/verifier.hpp"
#include "helpers.hpp"

using namespace gtsim::ir;

TEST(RoundTrip, EveryShippedKernelParsesPrintsAndReparsesEqual) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GTSIM_SOURCE_DIR) + "/kernels_ir/lib")) {
    if (e.path().extension() != ".kir") continue;
    SCOPED_TRACE(e.path().string());
    auto k = parse_kernel_file(e.path().string());
    std::string text = print_kernel(*k);
    auto k2 = parse_kernel_string(text, "printed");
    EXPECT_TRUE(*k == *k2) << text;
    EXPECT_EQ(print_kernel(*k2), text);
    ++n;
  }
  EXPECT_GE(n, 12);
}

TEST(RoundTrip, EveryShippedKernelVerifiesClean) {
  VerifyLimits h200{1024, 232448, 255};
  for (const auto& e : std::filesystem::directory_iterator(std::string(GTSIM_SOURCE_DIR) + "/kernels_ir/lib")) {
    if (e.path().extension() != ".kir") continue;
    auto k = parse_kernel_file(e.path().string());
    auto d = verify(*k, &h200);
    EXPECT_TRUE(d.empty()) << e.path() << ": " << (d.empty() ? "" : d[0].str());
  }
}

TEST(RoundTrip, ExpressionPrecedenceSurvives) {
  auto k = parse_kernel_string("kernel k(a = 1, b = 2) {\n grid (a + b) * 2 - (a - b) - -a, a << 2 >> 1\n block 32\n}\n");
  auto k2 = parse_kernel_string(print_kernel(*k));
  EXPECT_TRUE(*k == *k2) << print_kernel(*k);
  auto p = Program::build(*k, {});
  EXPECT_EQ(p->grid().x, 8u);
  EXPECT_EQ(p->grid().y, 2u);
}
