#include <gtest/gtest.h>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"

using namespace gtsim::ir;

TEST(Executor, DivergenceCounts) {
  auto k = parse_kernel_string(R"(
kernel divergence(ways = 4, work = 10) {
  grid 2 block 64
  buffer out : f32[2 * 64]
  loop b in 0 .. ways {
    if (lane % ways == b) {
      loop i in 0 .. work { r1 = ffma r1, r2, r3 }
    }
  }
  st.global out[ctaid.x * 64 + tid.x], r1
}
)");
  auto p = Program::build(*k, {});
  WarpExecutor w(*p, Dim3{0, 0, 0}, 1);
  DynInst d;
  int n = 0, control = 0;
  uint32_t seen = 0;
  while (w.next(d)) {
    if (p->instruction(d.static_id).text.find("loop control") != std::string::npos) {
      ++control;  // per path: work = 10 in groups of 4 (the default unroll): 2 groups + a remainder group of 2
      EXPECT_EQ(std::popcount(d.active), 8);
      continue;
    }
    ++n;
    if (d.op == OpClass::kFp32) {
      EXPECT_EQ(std::popcount(d.active), 8);
      EXPECT_EQ(seen & d.active, n % 10 == 1 ? 0u : (seen & d.active));
      seen |= d.active;
    } else {
      EXPECT_EQ(d.active, 0xffffffffu);
      EXPECT_EQ(d.addr[0], p->buffers()[0].base + 32 * 4);
      EXPECT_EQ(d.addr[31], p->buffers()[0].base + 63 * 4);
    }
  }
  EXPECT_EQ(n, 41);
  EXPECT_EQ(control, 4 * (2 + 1) * 3);  // `loop b in 0 .. 4` is fully unrolled: no control of its own
}
