// End-to-end memory behaviour through the GPU model and the IR kernel library (P1, P7, the L2
// write policy). Sizes are chosen so the suite stays fast; the full-size copy is DISABLED_ (run
// it with --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/launch_history.hpp"
#include "sim/config.hpp"
#include "tests/test_paths.hpp"

namespace gtsim::mem {
namespace {

using gtsim::testing::src;

gpu::KernelResult run_kernel(gpu::GpuModel& m, const std::string& kernel, const ir::ParamValues& params) {
  auto k = ir::parse_kernel_file(src("kernels_ir/lib/" + kernel + ".kir"));
  auto p = ir::Program::build(*k, params);
  return m.run(*p);
}

gpu::KernelResult run_once(const std::string& hw, const std::vector<std::string>& sets, const std::string& kernel,
                           const ir::ParamValues& params) {
  auto cfg = ConfigNode::load_file(src("hw_configs/" + hw), sets);
  gpu::GpuModel m(*cfg);
  return run_kernel(m, kernel, params);
}

double chase_cycles_per_hop(const std::vector<std::string>& sets, int64_t footprint) {
  auto r = run_once("h200-sxm.yaml", sets, "pointer_chase", {{"footprint_bytes", footprint}, {"stride_bytes", 128}});
  return double(r.cycles) / double(footprint / 128);
}

// P1: the per-hop latency steps up as the footprint leaves L1, then L2, and each plateau sits
// near the configured latency of its level. L2 is shrunk to 8 MiB so the HBM point is quick.
TEST(MemoryHierarchy, PointerChaseLatencyStepsAtEachCapacity) {
  std::vector<std::string> sets = {"l2.size_bytes=8388608"};
  double l1 = chase_cycles_per_hop(sets, 64 << 10);   // fits the ~248 KiB L1
  double l2 = chase_cycles_per_hop(sets, 2 << 20);    // fits L2, not L1
  double hbm = chase_cycles_per_hop(sets, 32 << 20);  // 4x L2
  EXPECT_GT(l2 / l1, 3.0);
  EXPECT_LT(l2 / l1, 30.0);
  EXPECT_GT(hbm / l2, 1.5);
  EXPECT_LT(hbm / l2, 10.0);
  // h200-sxm.yaml: l1 33, L2 hit 245 (+35 mean far extra), HBM +200 ns = 396 cycles; a hop adds
  // a few cycles of SM work and the warm-up adds a little per hop.
  EXPECT_NEAR(l1, 33 + 10, 10);
  EXPECT_NEAR(l2, 245 + 35 + 10, 25);
  EXPECT_NEAR(hbm, 245 + 35 + 396 + 10, 60);
}

double useful_tbps(int64_t n, int64_t stride, const std::vector<std::string>& sets = {}) {
  auto r = run_once("h200-sxm.yaml", sets, "strided_copy", {{"n", n}, {"stride", stride}});
  return double(2 * 4 * n) / r.time_us / 1e6;
}

// P7: the useful bandwidth falls as the stride spreads a warp's 32 words over more sectors. The
// tensors are 8 MiB each against an L2 shrunk 8x (7.5 MiB): the footprint-to-L2 ratio of the twin's
// measured 2^24-element copy (b1: 2.13 TB/s at stride 1, 0.96 at stride 8), so that the strided
// reads' extra sectors come from HBM, not from an L2 that holds both tensors.
TEST(Coalescing, StridedCopyBandwidthFallsWithStride) {
  int64_t n = 1 << 21;
  const std::vector<std::string> l2_8x = {"l2.size_bytes=7864320"};
  double s1 = useful_tbps(n, 1, l2_8x), s8 = useful_tbps(n, 8, l2_8x), s64 = useful_tbps(n, 64, l2_8x);
  EXPECT_GT(s1, 2.0 * s8);
  EXPECT_GE(s8, s64 * 0.9);
}

// P7: row-major thread mapping (a warp reads a row) against column-major (a warp reads a column).
TEST(Coalescing, ColumnMajorMappingMovesSeveralTimesTheSectors) {
  int64_t n = 1 << 22;  // 16 MiB per tensor: small sizes are launch- and latency-bound
  auto row = run_once("h200-sxm.yaml", {}, "strided_copy", {{"n", n}, {"stride", 1}});
  auto col = run_once("h200-sxm.yaml", {}, "strided_copy", {{"n", n}, {"stride", 1024}});
  double row_sectors = row.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"].get<double>();
  double col_sectors = col.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"].get<double>();
  EXPECT_NEAR(col_sectors / row_sectors, 8.0, 0.5);  // 32 sectors per warp instead of 4
  EXPECT_GT(col.time_us, 2.0 * row.time_us);
}

double copy_dram_tbps(int64_t n, gpu::KernelResult* out = nullptr) {
  static std::map<int64_t, gpu::KernelResult> cache;  // the bandwidth and write-policy tests share runs
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, run_once("h200-sxm.yaml", {}, "stream_copy", {{"n", n}})).first;
  const gpu::KernelResult& r = it->second;
  if (out) *out = r;
  return double(r.dram_read_bytes + r.dram_write_bytes) / r.time_us / 1e6;
}

// P7: a long copy is HBM-bound: DRAM bytes / time sits at the configured bandwidth of 1:1 traffic,
// bandwidth_gbps (a pure stream's rate) / (1 + mixed_traffic_overhead).
double configured_tbps() {
  auto cfg = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"));
  const ConfigNode& hbm = cfg->at("hbm");
  double mix = hbm.has("mixed_traffic_overhead") ? hbm.param<double>("mixed_traffic_overhead").get() : 0.0;
  return hbm.param<double>("bandwidth_gbps").get() / 1000.0 / (1.0 + mix);
}

TEST(Coalescing, StreamCopySustainsTheConfiguredHbmBandwidth) {
  double bw = configured_tbps();
  // 128 MiB per tensor, 2x L2; up to the L2's size of written lines are still dirty in it at the end
  // (not DRAM bytes yet): the rate sits up to 7% under the configured one
  EXPECT_NEAR(copy_dram_tbps(1 << 25), bw, 0.07 * bw);
}

TEST(Coalescing, DISABLED_StreamCopyFullSizeSustainsTheConfiguredHbmBandwidth) {
  double bw = configured_tbps();
  EXPECT_NEAR(copy_dram_tbps(1 << 28), bw, 0.05 * bw);
}

// L2 write-back: a kernel writing a tensor smaller than L2 leaves it dirty in L2 (almost no
// DRAM writes); one several times larger writes about its size minus what stays.
TEST(L2WritePolicy, SmallOutputStaysInL2LargeOneIsWrittenBack) {
  gpu::KernelResult small, large;
  copy_dram_tbps(1 << 20, &small);  // 4 MiB written
  copy_dram_tbps(1 << 25, &large);  // 128 MiB written, L2 60 MiB
  EXPECT_LT(small.dram_write_bytes, 64u * 1024);
  double written = double(4ull << 25);
  EXPECT_GT(double(large.dram_write_bytes), written - 62914560.0);
  EXPECT_LT(double(large.dram_write_bytes), written);
}

// What a kernel stores reaches DRAM during it (evicted) or is still dirty in the L2 when it ends, the
// writes it still owes (l2_dirty_bytes_at_end, docs/units.md): the two add up to the bytes stored,
// whether the output fits in the L2 (4 MiB: almost all owed) or not (128 MiB: mostly written).
TEST(L2WritePolicy, EveryStoredSectorIsWrittenBackOrStillDirtyAtTheEnd) {
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 25}) {
    gpu::KernelResult r;
    copy_dram_tbps(n, &r);
    const double stored = 4.0 * double(n);
    EXPECT_NEAR(double(r.dram_write_bytes + r.l2_dirty_bytes_at_end), stored, 0.02 * stored) << n << " floats";
    EXPECT_LE(double(r.l2_dirty_bytes_at_end), 62914560.0) << "no more than the 60 MiB L2 holds";
  }
}

// L2 contents carry over: a second kernel reading what the first wrote hits in L2.
TEST(L2WritePolicy, SecondKernelReadsTheFirstKernelsOutputFromL2) {
  auto cfg = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"));
  gpu::GpuModel m(*cfg);
  auto first = run_kernel(m, "stream_copy", {{"n", 1 << 20}});
  auto second = run_kernel(m, "stream_copy", {{"n", 1 << 20}});
  EXPECT_GT(first.dram_read_bytes, 4000000u);
  EXPECT_LT(second.dram_read_bytes, 64u * 1024);
  EXPECT_GT(second.l2_hit_rate, 0.95);
}

// A write-back L2 holds a launch's stores dirty after it ends; launches that follow on other buffers
// evict those lines and pay their DRAM writes. A copy launched back to back through rotating buffers
// (as a benchmark times "cold" runs) therefore writes about as many bytes to DRAM as it stores, even
// when everything it touches fits in the L2; the same copy on a fresh machine writes almost none.
TEST(L2WritePolicy, RotatingLaunchesWriteBackTheDirtyLinesOfTheLaunchesBefore) {
  auto cfg = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"), {"l2.size_bytes=7864320"});
  auto k = ir::parse_kernel_file(src("kernels_ir/lib/stream_copy.kir"));
  auto p = ir::Program::build(*k, {{"n", 1 << 20}});  // 4 MiB read, 4 MiB written
  const double stored = 4.0 * (1 << 20);
  auto run = [&](gpu::LaunchHistory h) {
    gpu::GpuModel m(*cfg);
    return gpu::run_after_history(m, *k, *p, h, gpu::config_l2_bytes(*cfg));
  };
  auto empty = run({gpu::L2Start::kEmpty});
  auto hot = run({gpu::L2Start::kHot});
  auto rotating = run({gpu::L2Start::kRotating});
  auto two_slots = run({gpu::L2Start::kRotating, 2});
  EXPECT_EQ(empty.earlier, 0u);
  EXPECT_EQ(hot.earlier, 1u);
  EXPECT_EQ(rotating.earlier, 1u);  // one 8 MiB launch fills the 7.5 MiB L2
  EXPECT_EQ(two_slots.earlier, 1u);
  EXPECT_LT(double(empty.result.dram_write_bytes), 0.25 * stored);  // 7.5 MiB of L2 keeps most of 4 MiB dirty
  EXPECT_GT(double(rotating.result.dram_write_bytes), 0.8 * stored);
  EXPECT_LT(double(rotating.result.dram_write_bytes), 1.1 * stored);
  EXPECT_NEAR(double(rotating.result.dram_read_bytes), stored, 0.02 * stored);  // its own source, from DRAM
  EXPECT_GT(rotating.result.time_us, 1.3 * empty.result.time_us);  // the write-backs share the DRAM bandwidth
  // with the full L2 (60 MiB) the rotation needs 8 earlier 8 MiB launches to fill it, unless the
  // benchmark has fewer buffer sets
  auto full = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"));
  gpu::GpuModel m(*full);
  EXPECT_EQ(gpu::run_after_history(m, *k, *p, {gpu::L2Start::kRotating, 3}, gpu::config_l2_bytes(*full)).earlier, 2u);
  EXPECT_THROW(gpu::parse_l2_start("warm"), std::invalid_argument);
  EXPECT_EQ(gpu::parse_l2_start(gpu::l2_start_name(gpu::L2Start::kRotating)), gpu::L2Start::kRotating);
}

// A launch right after one on the same buffers finds them in the L2: `resident` puts them there
// (written ones dirty) without simulating that launch. A copy that fits then reads almost nothing from
// DRAM and writes nothing; one that does not fit evicts the dirty lines put there and writes them back.
TEST(L2WritePolicy, ResidentBuffersHitInTheL2AndTheirDirtyLinesAreWrittenBackWhenEvicted) {
  auto k = ir::parse_kernel_file(src("kernels_ir/lib/stream_copy.kir"));
  auto p = ir::Program::build(*k, {{"n", 1 << 20}});  // 4 MiB read, 4 MiB written
  const double bytes = 4.0 * (1 << 20);
  auto run = [&](const std::vector<std::string>& sets, gpu::L2Start s) {
    auto cfg = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"), sets);
    gpu::GpuModel m(*cfg);
    return gpu::run_after_history(m, *k, *p, {s}, gpu::config_l2_bytes(*cfg));
  };
  // the store path's rates lifted (noc.store_bytes_per_cycle_per_sm, l2.write_bytes_per_cycle_per_slice):
  // at the H200's this copy's 4 MiB of stores bound it whatever the L2 holds; the reads are compared
  const std::vector<std::string> fast_stores = {"noc.store_bytes_per_cycle_per_sm=1000",
                                                "l2.write_bytes_per_cycle_per_slice=1000"};
  auto resident = run(fast_stores, gpu::L2Start::kResident), hot = run(fast_stores, gpu::L2Start::kHot);
  auto empty = run(fast_stores, gpu::L2Start::kEmpty);
  EXPECT_EQ(resident.earlier, 0u);
  EXPECT_LT(double(resident.result.dram_read_bytes), 0.05 * bytes);
  EXPECT_LT(double(hot.result.dram_read_bytes), 0.05 * bytes);
  EXPECT_EQ(resident.result.dram_write_bytes, 0u);
  EXPECT_LT(resident.result.time_us, 0.8 * empty.result.time_us);  // no DRAM latency on the reads
  EXPECT_NEAR(resident.result.time_us / hot.result.time_us, 1.0, 0.1);
  // a 2 MiB L2 holds the last quarter of each buffer, the destination's dirty: evicted, written back
  auto small = run({"l2.size_bytes=2097152"}, gpu::L2Start::kResident);
  auto small_empty = run({"l2.size_bytes=2097152"}, gpu::L2Start::kEmpty);
  EXPECT_GT(double(small.result.dram_write_bytes), double(small_empty.result.dram_write_bytes) + 0.15 * bytes);
  EXPECT_GT(double(small.result.dram_read_bytes), 0.95 * bytes);  // the kernel starts on the evicted part
}

}  // namespace
}  // namespace gtsim::mem

namespace gtsim::mem {
namespace {

// The store path (experiment b35's store_rate kernel: CTAs of 8 warps, one per SM, each rewriting its
// own 128 KiB of L2-resident lines with 16-byte stores): a store's line request is sent as its
// sectors' data plus, when a sector is written only in part, its byte mask (noc.store_mask_bytes);
// an SM sends noc.store_bytes_per_cycle_per_sm of these wire bytes a cycle, and a slice takes them at
// l2.write_bytes_per_cycle_per_slice. Figures are the bytes stored per cycle per SM, from the cycles
// per pass (the slope between 2 and 4 passes).
double stored_bytes_per_sm_cycle(const std::vector<std::string>& sets, int64_t pattern, int64_t ctas) {
  auto cycles = [&](int64_t passes) {
    auto cfg = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"), sets);
    gpu::GpuModel m(*cfg);
    auto k = ir::parse_kernel_file(src("validation/data/h200/experiments/b35_store_rate/store_rate.kir"));
    auto p = ir::Program::build(*k, {{"pattern", pattern}, {"ctas", ctas}, {"passes", passes}});
    return double(m.run(*p).cycles);
  };
  return 128.0 * 1024 / ((cycles(4) - cycles(2)) / 2);
}

TEST(StorePath, AnSmSendsWholeSectorsAtItsStoreRate) {
  const double at32 = stored_bytes_per_sm_cycle({"noc.store_bytes_per_cycle_per_sm=32"}, 0, 1);
  EXPECT_NEAR(at32, 32.0, 32.0 * 0.08);
  const double at16 = stored_bytes_per_sm_cycle({"noc.store_bytes_per_cycle_per_sm=16"}, 0, 1);
  EXPECT_NEAR(at32 / at16, 2.0, 0.15);
}

// gemm_fp32's epilogue writes each sector in two 16-byte halves: each request sends 4 sectors of
// wire data for 64 bytes, and with a 32-byte mask 5: 12.8 bytes stored per cycle at 32 wire bytes.
TEST(StorePath, APartiallyWrittenSectorSendsItsByteMaskToo) {
  const double masked = stored_bytes_per_sm_cycle({"noc.store_mask_bytes=32"}, 1, 1);
  EXPECT_NEAR(masked, 32.0 * 64 / 160, 12.8 * 0.08);
  const double unmasked = stored_bytes_per_sm_cycle({"noc.store_mask_bytes=0"}, 1, 1);
  EXPECT_NEAR(unmasked / masked, 160.0 / 128, 0.08);
  // whole sectors of half lines send no mask: as fast as whole lines
  EXPECT_NEAR(stored_bytes_per_sm_cycle({}, 2, 1) / stored_bytes_per_sm_cycle({}, 0, 1), 1.0, 0.08);
}

// 132 SMs storing together are held by the slices' write rate (80 slices), not by their own paths.
TEST(StorePath, ManySmsStoringAreHeldByTheL2sWriteRate) {
  const double l2 = 80 * 28.6 / 132;  // bytes per SM cycle at the slices' write rate
  const double shared = stored_bytes_per_sm_cycle({"l2.write_bytes_per_cycle_per_slice=28.6"}, 0, 132);
  EXPECT_NEAR(shared, l2, l2 * 0.1);
  const double doubled = stored_bytes_per_sm_cycle({"l2.write_bytes_per_cycle_per_slice=57.2"}, 0, 132);
  EXPECT_GT(doubled, 1.5 * shared);  // then up to the SMs' own 32
}

}  // namespace
}  // namespace gtsim::mem
