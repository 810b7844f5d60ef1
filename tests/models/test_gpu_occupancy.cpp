// Occupancy rules as the CUDA occupancy calculator applies them, and the driver's carve-out choice.
#include <gtest/gtest.h>

#include "gpu_test_util.hpp"
#include "models/gpu/occupancy.hpp"
#include "models/gpu/specs.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {
namespace {

GpuSpecs specs_of(const std::string& hw) { return GpuSpecs::parse(*testing::load_hw(hw)); }

Occupancy occ(const GpuSpecs& g, uint32_t threads, uint32_t regs, uint32_t smem) {
  return compute_occupancy(g.sm, g.l1_unified_kb, KernelShape{threads, regs, smem}, "test");
}

TEST(Occupancy, RegistersLimitCtasInAllocationGranules) {
  GpuSpecs a100 = specs_of("a100-40gb");
  // 64 regs x 32 lanes = 2048 per warp; 65536 / 2048 = 32 warps = 1 CTA of 1024 threads.
  Occupancy o = occ(a100, 1024, 64, 0);
  EXPECT_EQ(o.ctas_per_sm, 1u);
  EXPECT_EQ(o.limiter, "registers");
  // 33 regs round up to 40 x 32 = 1280 -> granule 256 -> 1280 per warp; 51 warps -> 6 CTAs of 8 warps.
  Occupancy p = occ(a100, 256, 33, 0);
  EXPECT_EQ(p.regs_per_warp, 1280u);
  EXPECT_EQ(p.limit_registers, 6u);
  EXPECT_EQ(p.ctas_per_sm, 6u);
}

TEST(Occupancy, SharedMemoryPicksSmallestCarveoutThatFits) {
  GpuSpecs a100 = specs_of("a100-40gb");
  // 40 KB + 1 KB reserved per CTA; the largest carve-out (164 KB) holds 4.
  Occupancy o = occ(a100, 128, 32, 40 * 1024);
  EXPECT_EQ(o.ctas_per_sm, 4u);
  EXPECT_EQ(o.limiter, "shared_mem");
  EXPECT_EQ(o.carveout_bytes, 164u * 1024);
  EXPECT_EQ(o.l1_bytes, (192u - 164u) * 1024);
  // 10 KB per CTA, 8 CTAs by warps and registers: 88 KB -> the 100 KB carve-out, L1 gets 92 KB.
  Occupancy p = occ(a100, 256, 32, 10 * 1024);
  EXPECT_EQ(p.ctas_per_sm, 8u);
  EXPECT_EQ(p.carveout_bytes, 100u * 1024);
  EXPECT_EQ(p.l1_bytes, 92u * 1024);
}

TEST(Occupancy, ThreadsAndWarpSlotsLimitLargeCtas) {
  GpuSpecs h200 = specs_of("h200-sxm");
  Occupancy o = occ(h200, 1024, 16, 0);  // registers would allow 4
  EXPECT_EQ(o.limit_registers, 4u);
  EXPECT_EQ(o.ctas_per_sm, 2u);
  EXPECT_EQ(o.limiter, "warps");
  EXPECT_DOUBLE_EQ(o.theoretical_pct, 100.0);
}

TEST(Occupancy, CtaSlotsLimitTinyCtas) {
  GpuSpecs h200 = specs_of("h200-sxm");
  Occupancy o = occ(h200, 32, 16, 0);
  EXPECT_EQ(o.ctas_per_sm, 32u);
  EXPECT_EQ(o.limiter, "blocks");
  EXPECT_DOUBLE_EQ(o.theoretical_pct, 50.0);
}

TEST(Occupancy, KernelThatCannotFitIsAnInputError) {
  GpuSpecs a100 = specs_of("a100-40gb");
  EXPECT_THROW(occ(a100, 2048, 32, 0), InputError);        // more threads than a CTA may have
  EXPECT_THROW(occ(a100, 256, 256, 0), InputError);        // more registers per thread than 255
  EXPECT_THROW(occ(a100, 256, 32, 200 * 1024), InputError);  // more shared memory than 163 KB
}

TEST(Occupancy, ReportedInKernelResult) {
  auto p = testing::lib_kernel("fixed_work", {{"ctas", 264}, {"work", 8}});
  KernelResult r = testing::run_one("h200-sxm", *p);
  EXPECT_EQ(r.ctas_per_sm, 2u);
  // The twin's 11 registers (ptxas) leave room for more CTAs; 2 x 32 warps fill the SM's 64.
  EXPECT_EQ(r.occupancy_limiter, "warps");
  EXPECT_DOUBLE_EQ(r.waves, 1.0);
  EXPECT_GT(r.metrics["launch__occupancy_limit_registers"].get<int>(), 2);
  EXPECT_EQ(r.metrics["launch__occupancy_limit_warps"], 2);
  EXPECT_EQ(r.metrics["launch__grid_size"], 264);
  EXPECT_EQ(r.metrics["launch__block_size"], 1024);
}

}  // namespace
}  // namespace gtsim::gpu
