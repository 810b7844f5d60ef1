#include <gtest/gtest.h>

#include "kernels_ir/parser.hpp"
#include "kernels_ir/verifier.hpp"
#include "helpers.hpp"

using namespace gtsim::ir;

namespace {
std::string first(const std::string& text, const VerifyLimits* lim = nullptr) {
  auto d = verify(*parse_kernel_string(text, "v.kir"), lim);
  return d.empty() ? "" : d[0].str();
}
}  // namespace

TEST(VerifierUndefinedName, NamesTheNameAndPlace) {
  auto m = first("kernel k() {\n grid 1 block 32\n buffer b : f32[32]\n x = ld.global b[tid.x + nope]\n}\n");
  EXPECT_NE(m.find("v.kir:4:"), std::string::npos) << m;
  EXPECT_NE(m.find("undefined name 'nope'"), std::string::npos) << m;
}

TEST(VerifierTypeError, SharedInstructionOnGlobalBuffer) {
  auto m = first("kernel k() {\n grid 1 block 32\n buffer b : f32[32]\n x = ld.shared b[lane]\n}\n");
  EXPECT_NE(m.find("'b' is a global buffer but ld.shared needs a shared array"), std::string::npos) << m;
}

TEST(VerifierTypeError, CpAsyncSizeMustBe4Or8Or16) {
  auto m = first("kernel k() {\n grid 1 block 32\n buffer b : f32[32]\n shared s : f32[32]\n cp.async.ca.12 s[lane], b[lane]\n}\n");
  EXPECT_NE(m.find("cp.async size 12 bytes, expected 4, 8 or 16"), std::string::npos) << m;
}

TEST(VerifierTypeError, MmaDtypeMismatchIsRejected) {
  try {
    parse_kernel_string("kernel k() {\n grid 1 block 32\n d = mma.sync.m16n8k16.tf32.f32 a, b, d\n}\n", "v.kir");
    FAIL();
  } catch (const gtsim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("v.kir:3:6: mma shape m16n8k16 with tf32"), std::string::npos) << e.what();
  }
}

TEST(VerifierBarrierUnderDivergence, NamesTheBranch) {
  auto m = first("kernel k() {\n grid 1 block 64\n if (lane < 16) {\n  bar.sync\n }\n}\n");
  EXPECT_NE(m.find("v.kir:4:3: bar.sync under a divergent branch: the if at v.kir:3:2 has a lane-varying predicate (lane < 16)"), std::string::npos) << m;
  EXPECT_EQ(first("kernel k(n = 1) {\n grid 1 block 64\n if (n == 1) {\n  bar.sync\n }\n}\n"), "");
  EXPECT_EQ(first("kernel k() {\n grid 1 block 64\n if (warp == 0) {\n  bar.sync\n }\n}\n"), "");
}

TEST(VerifierLimits, SmemOverLimit) {
  VerifyLimits lim{1024, 166912, 255};
  auto m = first("kernel k() {\n grid 1 block 64\n smem 200000\n}\n", &lim);
  EXPECT_EQ(m, "v.kir:3:7: smem 200000 bytes exceeds the machine's 166912 bytes per CTA (sm.shared.max_per_cta_bytes)");
}

TEST(VerifierLimits, BlockOverLimit) {
  VerifyLimits lim{1024, 166912, 255};
  auto m = first("kernel k() {\n grid 1 block 64, 32\n}\n", &lim);
  EXPECT_EQ(m, "v.kir:2:15: block of 2048 threads exceeds the machine's 1024 threads per CTA (sm.max_threads_per_cta)");
}

TEST(VerifierParams, ChecksUserParameters) {
  auto k = parse_kernel_file(gtsim::ir::test::lib("gemm_tiled.kir"));
  VerifyLimits lim{1024, 166912, 255};
  EXPECT_TRUE(verify(*k, &lim).empty());
  EXPECT_TRUE(verify(*k, ParamValues{{"STAGES", 8}}, &lim).empty());
  auto d = verify(*k, ParamValues{{"STAGES", 12}}, &lim);
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d[0].message.find("smem 196608 bytes exceeds"), std::string::npos) << d[0].str();
  d = verify(*k, ParamValues{{"bogus", 1}}, &lim);
  EXPECT_NE(d[0].message.find("unknown parameter 'bogus'"), std::string::npos);
}
