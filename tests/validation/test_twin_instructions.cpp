// Twin fidelity beyond the main-loop histogram. Over the whole kernel: the IR's gemm_tiled issues as many
// warp instructions as its CUDA twin executed on the H200 (Nsight Compute's inst_executed, batch b8),
// prologue and epilogue included. The twin's epilogue spends 24 instructions per stored pair (the
// alpha scaling, 64-bit addresses, edge tests); an IR that stores with 2 falls 20% short.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "validation/csv.hpp"
#include "validation/fidelity.hpp"
#include "validation/measured.hpp"
#include "validation/simrun.hpp"
#include "validation_fixture.hpp"

using namespace gtsim::validation;
using namespace gtsim::validation::fixture;

namespace {
// inst_executed of the launches of an `apps --ncu=N` profile, in launch order (b8, --ncu=2: n = 1024,
// 1028, 1032, 1040, 1064, 1100; b9, --ncu=3: 1024, 1025, 1026, 1028, 1793; their README.md).
std::vector<double> measured_inst_executed(const std::string& file) {
  std::ifstream in(kData + "/" + file);
  std::string line, text;
  while (std::getline(in, line))
    if (line.rfind("==", 0) != 0) text += line + "\n";  // Nsight's own log lines
  CsvTable t = parse_csv(text, file);
  std::vector<double> out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (!parse_number(t.get(r, "ID"))) continue;  // the units row
    if (auto v = parse_number(t.get(r, "inst_executed"))) out.push_back(*v);
  }
  return out;
}
}  // namespace

TEST(TwinFidelity, GemmTiledIssuesTheTwinsWarpInstructionsWithinTenPercent) {
  std::vector<double> hw = measured_inst_executed("b8/ncu_gemm_stalls.csv");
  ASSERT_EQ(hw.size(), 6u);
  // b9: n = 1024, 1025, 1026, 1028, 1793 (VEC 8, 1, 2, 4, 1): the rolled copy loops' address work per pass
  std::vector<double> vec = measured_inst_executed("b9/ncu_gemm_vec.csv");
  ASSERT_EQ(vec.size(), 5u);
  // VEC 8 aligned, VEC 4, VEC 8 with a 16 mod 32 pitch, VEC 1 (element loads), VEC 2 (4-byte cp.async)
  const int64_t ns[] = {1024, 1028, 1032, 1025, 1026};
  const double measured[] = {hw[0], hw[1], hw[2], vec[1], vec[2]};
  SimRunner sim(kHw, kKernels);
  std::vector<SimJob> jobs;
  for (int64_t n : ns) jobs.push_back({"gemm_tiled", {{"M", n}, {"N", n}, {"K", n}}, {}});
  auto out = sim.run_all(jobs);
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(out[i].ok) << out[i].error;
    double model = double(out[i].result.warp_instructions);
    EXPECT_NEAR(model / measured[i], 1.0, 0.10)
        << "n = " << ns[i] << ": model " << model << " warp instructions, the H200 " << measured[i];
  }
}

// ptxas pads cp.async groups with `@!PT LDS RZ, [RZ]`: predicated on constant false, so not
// shared-memory work of the loop, but issued (an issue slot, class "slot", as NOP and the uniform ops).
TEST(TwinFidelity, InstructionsPredicatedOnConstantFalseCountAsIssueSlots) {
  const std::string sass =
      "        Function : _ZN5twins4copyEPfi\n"
      "        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
      "        /*0010*/                   LDGSTS.E [R5], desc[UR4][R6.64] ;\n"
      "        /*0020*/              @!PT LDS RZ, [RZ] ;\n"
      "        /*0030*/               @P0 LDS R7, [R8] ;\n"
      "        /*0040*/               @P0 BRA 0x10 ;\n"
      "        /*0050*/                   EXIT ;\n";
  auto f = parse_sass(sass);
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f[0].has_loop);
  EXPECT_EQ(f[0].loop_hist["cp_async"], 1);
  EXPECT_EQ(f[0].loop_hist["ld_shared"], 1);  // the @P0 one; the @!PT one is padding: issued, no work
  EXPECT_EQ(f[0].loop_hist["slot"], 1);
}

// At VEC 1 and 2 the twin's tile copies stay rolled inside the k-loop (2 copies per pass). The
// checker compares the k-loop, which nests both copy loops, with the IR's k-loop, each rolled copy
// loop counted as one pass: per k-tile 4 loads and 4 stores (VEC 1) or 4 cp.async (VEC 2) beside
// 12 ldmatrix and 32 mma, on both sides. Comparing the innermost SASS loop instead (a copy loop,
// no mma) fails.
TEST(TwinFidelity, RolledCopyLoopsAreComparedWithTheSassLoopThatNestsThem) {
  Dataset d = load_dataset(kData);
  ASSERT_TRUE(d.ptxas_text.count("b8"));
  std::string sass = read_gz(d.sass_path.at("b8"));
  for (const auto& f : parse_sass(sass))
    if (f.function == "_ZN5twins10gemm_tiledILi1ELb0ELb0EEEvNS_8GemmArgsE") {
      int nests_two = 0;
      for (const auto& l : f.loops) nests_two += l.direct_nested == 2;
      EXPECT_EQ(nests_two, 1);                  // the k-loop
      EXPECT_EQ(f.loop_hist.count("mma"), 0u);  // the innermost loop with the most work is a copy loop
    }
  SimRunner sim(kHw, kKernels);
  auto r = check_fidelity(d.ptxas_text.at("b8"), "recorded", sass, sim, kHw, {}, "b8");
  const TwinCheck* v1 = r.find("b8", "gemm_tiledILi1ELb0ELb0E");
  const TwinCheck* v2 = r.find("b8", "gemm_tiledILi2ELb0ELb0E");
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v2, nullptr);
  for (const TwinCheck* t : {v1, v2}) {
    EXPECT_TRUE(t->sass_ok) << t->function << ": " << t->sass_detail.dump();
    EXPECT_EQ(t->sass_detail["mma"]["sass"], 32);
    EXPECT_DOUBLE_EQ(t->sass_detail["mma"]["ir_x_unroll"].get<double>(), 32);
    EXPECT_EQ(t->sass_detail["ldmatrix"]["sass"], 12);
  }
  EXPECT_EQ(v1->sass_detail["ld_global"]["sass"], 4);
  EXPECT_DOUBLE_EQ(v1->sass_detail["ld_global"]["ir_x_unroll"].get<double>(), 4);
  EXPECT_EQ(v1->sass_detail["st_shared"]["sass"], 4);
  EXPECT_EQ(v2->sass_detail["cp_async"]["sass"], 4);
  EXPECT_DOUBLE_EQ(v2->sass_detail["cp_async"]["ir_x_unroll"].get<double>(), 4);
}
