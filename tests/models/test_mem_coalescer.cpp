#include <gtest/gtest.h>

#include "models/mem/coalescer.hpp"
#include "tests/models/mem_test_util.hpp"

namespace gtsim::mem {
namespace {

using ir::OpClass;
using testing::warp_access;

TEST(Coalescer, ConsecutiveFourByteWordsTouchOneLineFourSectors) {
  Coalescer c;
  auto& r = c.coalesce(warp_access(OpClass::kLdGlobal, 4096, 4, 4));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].sector_mask, 0xfu);
  EXPECT_EQ(c.sectors(), 4u);
}

TEST(Coalescer, SixteenBytesPerLaneTouchFourLinesSixteenSectors) {
  Coalescer c;
  auto& r = c.coalesce(warp_access(OpClass::kLdGlobal, 8192, 16, 16));
  EXPECT_EQ(r.size(), 4u);
  EXPECT_EQ(c.sectors(), 16u);
}

TEST(Coalescer, ColumnWiseAccessTouchesOneLinePerLane) {
  Coalescer c;
  for (uint64_t stride : {128u, 256u, 4096u}) {
    auto& r = c.coalesce(warp_access(OpClass::kLdGlobal, 0, stride, 4));
    EXPECT_EQ(r.size(), 32u) << stride;
    EXPECT_EQ(c.sectors(), 32u) << stride;
  }
}

TEST(Coalescer, MisalignedBaseTouchesOneMoreLine) {
  Coalescer c;
  auto& r = c.coalesce(warp_access(OpClass::kLdGlobal, 4096 + 4, 4, 4));
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(c.sectors(), 5u);
  auto& v = c.coalesce(warp_access(OpClass::kLdGlobal, 4096 + 8, 16, 16));  // float4 off by 8 bytes
  EXPECT_EQ(v.size(), 5u);
}

TEST(Coalescer, AccessStraddlingALineTouchesBoth) {
  Coalescer c;
  auto& r = c.coalesce(warp_access(OpClass::kLdGlobal, 128 - 4, 0, 8, 1u));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].sector_mask, 0x8u);
  EXPECT_EQ(r[1].sector_mask, 0x1u);
}

TEST(Coalescer, InactiveLanesTouchNothing) {
  Coalescer c;
  EXPECT_TRUE(c.coalesce(warp_access(OpClass::kLdGlobal, 0, 128, 4, 0u)).empty());
  EXPECT_EQ(c.coalesce(warp_access(OpClass::kLdGlobal, 0, 128, 4, 0x5u)).size(), 2u);
}

}  // namespace
}  // namespace gtsim::mem
