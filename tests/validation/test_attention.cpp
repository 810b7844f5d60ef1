// Naive attention (issue 9): its three launches (attn_qk_gemm, softmax_rows to bf16, gemm_tiled<8> batched
// as attn_pv_gemm.kir) are the twins' programs by the committed b3 compiler record, and the three-launch
// point at the smallest T is simulated (summed), not excluded. flash_attention_fwd passes the same check.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "validation/fidelity.hpp"
#include "validation/measured.hpp"
#include "validation/simrun.hpp"
#include "validation/validate.hpp"
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

// Simulates the whole point (three launches, minutes of host time): in the `accuracy` label with the
// other full-model runs on the measured data, so the gating suite stays short.
TEST(AccuracyAttention, NaivePointAtTheSmallestTIsSimulatedAsThreeLaunches) {
  Dataset d = load_dataset(kData);
  // only b3's naive attention at T = 1024 (the data's other points are not needed)
  std::vector<MeasuredPoint> keep;
  for (const auto& p : d.points)
    if (p.batch == "b3" && p.kernel == "attention" && p.variant == "naive" && p.num("T") == 1024) keep.push_back(p);
  ASSERT_EQ(keep.size(), 1u);
  d.points = keep;
  ValidationOptions opt;
  opt.blind = false;
  opt.threads = 2;
  ValidationReport r = validate(kHw, d, kKernels, opt);
  ASSERT_EQ(r.points.size(), 1u);
  const PointResult& p = r.points[0];
  EXPECT_EQ(p.role, "held-out") << p.reason;
  EXPECT_TRUE(p.reason.empty()) << p.reason;
  ASSERT_TRUE(std::isfinite(p.sim));
  EXPECT_NE(p.sim_note.find("3 kernels back to back"), std::string::npos) << p.sim_note;
  // three launches of a 4096-CTA GEMM, 65536 softmax rows and a 512-CTA GEMM: tens to hundreds of us
  EXPECT_GT(p.sim, 50.0);
  EXPECT_LT(p.sim, 2000.0);
}
