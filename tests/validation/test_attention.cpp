// Naive attention (issue 9): its three launches (attn_qk_gemm, softmax_rows to bf16, gemm_tiled<8> batched
// as attn_pv_gemm.kir) are the twins' programs by the committed b3 compiler record, and the three-launch
// point at the smallest T is planned as three launches (summed), not excluded. flash_attention_fwd passes the same
// check.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "validation/fidelity.hpp"
#include "validation/measured.hpp"
#include "validation/simrun.hpp"
#include "validation/validate.hpp"
#include "validation/validate_plan.hpp"
#include "validation_fixture.hpp"

using namespace gtsim::validation;
using namespace gtsim::validation::fixture;

TEST(Attention, NaiveAndFlashIrKernelsPassTheB3Fidelity) {
  Dataset d = load_dataset(kData);
  ASSERT_TRUE(d.ptxas_text.count("b3") && d.sass_path.count("b3"));
  SimRunner sim(kHw, kKernels);
  auto r = check_fidelity(d.ptxas_text.at("b3"), "recorded", read_gz(d.sass_path.at("b3")), sim, kHw, {}, "b3");
  struct Want {
    const char* function;
    const char* kir;
  };
  for (const Want& w :
       {Want{"attn_qk_gemmILi8E", "attn_qk_gemm"}, Want{"softmax_rowsILi1E13__nv_bfloat16E", "softmax_rows"},
        Want{"softmax_rowsILi2E13__nv_bfloat16E", "softmax_rows"}, Want{"gemm_tiledILi8ELb0ELb0E", "attn_pv_gemm"},
        Want{"flash_attn_fwd", "flash_attention_fwd"}}) {
    const TwinCheck* t = r.find("b3", w.function, w.kir);
    ASSERT_NE(t, nullptr) << w.function << " vs " << w.kir << ".kir";
    EXPECT_TRUE(t->regs_equal) << w.function << ": registers twin " << t->twin_regs << " vs IR " << t->ir_regs;
    EXPECT_TRUE(t->smem_equal) << w.function << ": smem twin " << t->twin_smem << " vs IR " << t->ir_smem;
    EXPECT_TRUE(t->sass_checked) << w.function;
    EXPECT_TRUE(t->sass_ok) << w.function << " vs " << w.kir << ": " << t->sass_detail.dump();
    EXPECT_FALSE(t->fails()) << w.function << ": " << t->failure();
  }
}

// The naive point at the smallest T is planned as its three launches back to back, each a kernel of the
// library, with their times summed. The plan alone is checked here (simulating it takes minutes of host
// time); AccuracyHeldOut simulates it with the rest of the held-out set and fails when it is excluded.
TEST(Attention, NaivePointAtTheSmallestTIsPlannedAsThreeLaunchesBackToBack) {
  Dataset d = load_dataset(kData);
  const MeasuredPoint* point = nullptr;
  for (const auto& p : d.points)
    if (p.batch == "b3" && p.kernel == "attention" && p.variant == "naive" && p.num("T") == 1024) point = &p;
  ASSERT_NE(point, nullptr);
  SimRunner sim(kHw, kKernels);
  detail::AppMapping am = detail::app_mapping(*point, sim);
  ASSERT_EQ(am.kernels.size(), 3u) << am.reason;
  for (const auto& k : am.kernels) EXPECT_TRUE(sim.has_kernel(k.kir)) << k.kir;
  detail::Plan plan = detail::app_plan(*point, am, 50331648);
  EXPECT_EQ(plan.launches, 3);
  EXPECT_GE(plan.jobs.size(), 3u);
  EXPECT_NE(plan.note.find("3 kernels back to back"), std::string::npos) << plan.note;
}
