// The simulator's host-speed paths give the values of the general ones (determinism: a speed-up
// changes no stat). Shared-memory bank costs by shifts and masks against a brute-force count, and
// per-lane division by a power of two in index math against 64-bit division.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "models/gpu/shared_banks.hpp"

using namespace gtsim;

TEST(SpeedPaths, SharedBankCostByShiftsEqualsBruteForceCount) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    ir::DynInst in{};
    in.access_bytes = uint8_t(1u << (rng() % 5));  // 1 .. 16 bytes
    in.addr_active = uint32_t(rng()) | 1u;
    const uint32_t stride = uint32_t(rng() % 40);
    for (int l = 0; l < ir::kWarpSize; ++l)
      in.addr[l] =
          trial % 3 == 0 ? uint64_t(rng() % 4096) / in.access_bytes * in.access_bytes : uint64_t(l) * stride * 4;
    std::map<uint32_t, std::set<uint64_t>> words;  // bank -> distinct 4-byte words
    for (int l = 0; l < ir::kWarpSize; ++l)
      if (in.addr_active >> l & 1)
        for (uint64_t w = in.addr[l] / 4; w <= (in.addr[l] + in.access_bytes - 1) / 4; ++w)
          words[uint32_t(w % 32)].insert(w);
    uint32_t worst = 1, distinct = 0;
    for (auto& [b, s] : words) worst = std::max<uint32_t>(worst, uint32_t(s.size())), distinct += uint32_t(s.size());
    auto c = gpu::shared_wavefronts(in, 32, 4);
    ASSERT_EQ(c.wavefronts, worst) << "trial " << trial;
    ASSERT_EQ(c.ideal, std::max<uint32_t>((distinct + 31) / 32, 1)) << "trial " << trial;
  }
}

TEST(SpeedPaths, PowerOfTwoDivisionInIndexMathEqualsDivision) {
  auto k = ir::parse_kernel_string(R"(kernel divs(D = 32) {
  grid 1
  block 32
  buffer A : u8[1 << 20]
  let x = tid.x * 37 + 5
  let y = tid.x * 3 - 40
  a = ld.global A[x / D]
  b = ld.global A[x % D]
  c = ld.global A[cdiv(x, D)]
  d = ld.global A[y / D + 64]
  e = ld.global A[y % D + 64]
  f = ld.global A[cdiv(y, D) + 64]
}
)");
  for (int64_t D : {1, 2, 32, 64, 3, 48}) {
    auto prog = ir::Program::build(*k, {{"D", D}});
    ir::WarpExecutor w(*prog, ir::Dim3{0, 0, 0}, 0);
    ir::DynInst in{};
    std::vector<std::array<uint64_t, ir::kWarpSize>> addrs;
    while (w.next(in))
      if (in.op == ir::OpClass::kLdGlobal) {
        std::array<uint64_t, ir::kWarpSize> a{};
        for (int l = 0; l < ir::kWarpSize; ++l) a[l] = in.addr[l];
        addrs.push_back(a);
      }
    ASSERT_EQ(addrs.size(), 6u);
    auto cdiv = [](int64_t a, int64_t b) { return a / b + ((a % b != 0) && ((a < 0) == (b < 0))); };
    auto want = [&](int i, int64_t l) {
      const int64_t x = l * 37 + 5, y = l * 3 - 40;
      const int64_t v[6] = {x / D, x % D, cdiv(x, D), y / D + 64, y % D + 64, cdiv(y, D) + 64};
      return v[i];
    };
    // Addresses are A's base + index (u8): compare offsets from instruction 0, lane 0.
    const int64_t base = int64_t(addrs[0][0]) - want(0, 0);
    for (int i = 0; i < 6; ++i)
      for (int l = 0; l < ir::kWarpSize; ++l)
        EXPECT_EQ(int64_t(addrs[size_t(i)][size_t(l)]) - base, want(i, l)) << "D=" << D << " lane " << l << " op " << i;
  }
}
