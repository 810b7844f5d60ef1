#include <gtest/gtest.h>

#include "kernels_ir/parser.hpp"
#include "kernels_ir/printer.hpp"
#include "sim/error.hpp"

using namespace gtsim::ir;

TEST(Parser, ParsesDesignExample) {
  auto k = parse_kernel_string(R"(
kernel divergence(ways = 1, work = 256) {
  grid 528            block 256            regs 32
  buffer out : f32[528 * 256]
  loop b in 0 .. ways {
    if (lane % ways == b) {
      loop i in 0 .. work { r1 = ffma r1, r2, r3 }
    }
  }
  st.global out[ctaid.x * 256 + tid.x], r1
}
)", "div.kir");
  EXPECT_EQ(k->name, "divergence");
  EXPECT_EQ(k->params.size(), 2u);
  EXPECT_EQ(k->body.size(), 2u);
  auto k2 = parse_kernel_string(print_kernel(*k), "printed");
  EXPECT_TRUE(*k == *k2) << print_kernel(*k);
}

TEST(ParserErrors, GarbageNamesLineAndColumn) {
  try {
    parse_kernel_string("kernel k() {\n  grid 1 block 32\n  ??? (((\n}\n", "bad.kir");
    FAIL();
  } catch (const gtsim::InputError& e) {
    EXPECT_STREQ(e.what(), "bad.kir:3:3: unexpected '?', expected an instruction or statement");
  }
}
