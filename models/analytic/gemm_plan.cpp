#include "models/analytic/gemm_plan.hpp"

#include <algorithm>
#include <mutex>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/parser.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/occupancy.hpp"
#include "models/gpu/specs.hpp"

#ifndef GTSIM_SOURCE_DIR
#define GTSIM_SOURCE_DIR "."
#endif

namespace gtsim::analytic {

const std::vector<GemmTile>& gemm_tile_menu() {
  // Register counts follow the CUTLASS kernels of the same tile (8 warps, 3 stages): a 256x128
  // tile needs ~232 registers per thread, so one CTA per SM, as NVIDIA's guide says for the A100.
  static const std::vector<GemmTile> menu = {
      {256, 128, 32, 4, 2, 3, 232}, {128, 256, 32, 2, 4, 3, 232}, {128, 128, 32, 2, 4, 3, 128},
      {128, 64, 32, 4, 2, 3, 96},   {64, 128, 32, 2, 4, 3, 96},   {64, 64, 32, 2, 4, 3, 64},
  };
  return menu;
}

GemmTile parse_tile(const std::string& s) {
  for (const auto& t : gemm_tile_menu())
    if (t.str() == s) return t;
  std::string list;
  for (const auto& t : gemm_tile_menu()) list += (list.empty() ? "" : ", ") + t.str();
  throw InputError(SourcePos{"--tile", 0, 0}, "unknown tile '" + s + "', expected auto or one of " + list);
}

GemmSchedule parse_schedule(const std::string& s) {
  if (s == "data-parallel") return GemmSchedule::kDataParallel;
  if (s == "persistent") return GemmSchedule::kPersistent;
  if (s == "split-k") return GemmSchedule::kSplitK;
  throw InputError(SourcePos{"--schedule", 0, 0}, "unknown schedule '" + s + "', expected data-parallel, persistent or split-k");
}

std::string schedule_name(GemmSchedule s) {
  switch (s) {
    case GemmSchedule::kDataParallel: return "data-parallel";
    case GemmSchedule::kPersistent: return "persistent";
    case GemmSchedule::kSplitK: return "split-k";
  }
  return "?";
}

int vector_elems(int64_t ld) {
  for (int v : {8, 4, 2})
    if (ld % v == 0) return v;
  return 1;
}

namespace {
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
uint32_t smem_bytes(const GemmTile& t) { return uint32_t(t.stages * (t.bm * (t.bk + 8) + t.bk * (t.bn + 8)) * 2); }
}  // namespace

nlohmann::json GemmPlan::to_json() const {
  nlohmann::json j;
  j["gemm"] = {{"M", M}, {"N", N}, {"K", K}};
  j["tile"] = tile.str();
  j["schedule"] = schedule_name(schedule);
  j["tiles"] = tiles;
  j["tiles_m"] = tiles_m;
  j["tiles_n"] = tiles_n;
  j["ctas_per_sm"] = ctas_per_sm;
  j["occupancy_limiter"] = occupancy_limiter;
  j["wave_size"] = wave_size;
  j["waves"] = waves;
  j["last_wave_fill"] = last_wave_fill;
  j["grid"] = grid;
  if (schedule != GemmSchedule::kDataParallel) {
    j["tiles_per_cta_max"] = tiles_per_cta_max;
    j["tiles_per_cta_min"] = tiles_per_cta_min;
  }
  j["tile_efficiency"] = tile_efficiency;
  j["vector_bytes"] = vector_bytes;
  j["aligned"] = aligned();
  return j;
}

GemmPlan plan_gemm(const ConfigNode& hw, int64_t M, int64_t N, int64_t K, const GemmTile& tile, GemmSchedule sched) {
  if (M < 1 || N < 1 || K < 1) throw InputError(SourcePos{"--gemm", 0, 0}, "GEMM dimensions must be >= 1");
  auto specs = gpu::GpuSpecs::parse(hw);
  hw.mark_used_recursively();
  GemmPlan p;
  p.M = M, p.N = N, p.K = K, p.tile = tile, p.schedule = sched;
  p.tiles_m = cdiv(M, tile.bm), p.tiles_n = cdiv(N, tile.bn), p.tiles = p.tiles_m * p.tiles_n;
  auto occ = gpu::compute_occupancy(specs.sm, specs.l1_unified_kb, gpu::KernelShape{256, uint32_t(tile.regs), smem_bytes(tile)},
                                    "gemm_persistent");
  p.sms = specs.sm.count;
  p.ctas_per_sm = occ.ctas_per_sm;
  p.occupancy_limiter = occ.limiter;
  p.wave_size = int64_t(p.sms) * p.ctas_per_sm;
  p.waves = cdiv(p.tiles, p.wave_size);
  int64_t last = p.tiles - (p.waves - 1) * p.wave_size;
  p.last_wave_fill = double(last) / double(p.wave_size);
  p.tile_efficiency = double(M) * double(N) / (double(p.tiles_m * tile.bm) * double(p.tiles_n * tile.bn));
  p.vec_a = vector_elems(K), p.vec_b = vector_elems(N);
  p.vector_bytes = std::min(p.vec_a, p.vec_b) * 2;
  int64_t items = p.tiles;
  if (sched == GemmSchedule::kSplitK) {
    // Enough K slices to fill one wave, at least 4 BK steps per slice.
    int64_t ks = std::clamp<int64_t>(p.wave_size / std::max<int64_t>(p.tiles, 1), 1, std::max<int64_t>(cdiv(K, tile.bk) / 4, 1));
    items *= ks;
    p.tiles_per_cta_max = ks;  // reported as K slices per tile
  }
  if (sched == GemmSchedule::kDataParallel || sched == GemmSchedule::kSplitK) {
    p.grid = items;
    p.waves = cdiv(items, p.wave_size);
    p.last_wave_fill = double(items - (p.waves - 1) * p.wave_size) / double(p.wave_size);
    if (sched == GemmSchedule::kSplitK) p.tiles_per_cta_min = p.tiles_per_cta_max;
  } else {
    p.grid = std::min(items, p.wave_size);
    p.tiles_per_cta_max = cdiv(items, p.grid);
    p.tiles_per_cta_min = items / p.grid;
  }
  return p;
}

const ir::Kernel& gemm_kernel() {
  static std::once_flag once;
  static std::unique_ptr<ir::Kernel> k;
  std::call_once(once, [] { k = ir::parse_kernel_file(std::string(GTSIM_SOURCE_DIR) + "/kernels_ir/lib/gemm_persistent.kir"); });
  return *k;
}

ir::ParamValues gemm_params(const GemmPlan& p, int64_t base, int64_t count) {
  const auto& t = p.tile;
  int64_t ks = p.schedule == GemmSchedule::kSplitK ? p.tiles_per_cta_max : 1;
  int64_t grid = p.schedule == GemmSchedule::kPersistent ? std::min(count, p.grid) : count;
  return {{"M", p.M},           {"N", p.N},           {"K", p.K},          {"BM", t.bm},         {"BN", t.bn},
          {"BK", t.bk},         {"WARPS_M", t.warps_m}, {"WARPS_N", t.warps_n}, {"STAGES", t.stages}, {"REGS", t.regs},
          {"VEC_A", p.vec_a},   {"VEC_B", p.vec_b},   {"GRID", grid},      {"KSPLIT", ks},       {"TILE_BASE", base},
          {"TILE_COUNT", count}};
}

GemmTiming simulate_gemm(const ConfigNode& hw, const GemmPlan& p, bool exact) {
  const int64_t items = p.schedule == GemmSchedule::kSplitK ? p.tiles * p.tiles_per_cta_max : p.tiles;
  const int64_t round = p.schedule == GemmSchedule::kPersistent ? p.grid : p.wave_size;  // items per wave
  const int64_t rounds = (items + round - 1) / round;
  GemmTiming r;
  auto l2rd = [](const gpu::KernelResult& k) {
    auto it = k.metrics.find("lts__t_sectors_srcunit_tex_op_read.sum");
    return it == k.metrics.end() ? uint64_t(0) : it->get<uint64_t>() * 32;
  };
  auto run = [&](int64_t base, int64_t count) {
    gpu::GpuModel m(hw);
    auto prog = ir::Program::build(gemm_kernel(), gemm_params(p, base, count));
    return m.run(*prog);
  };
  if (exact || rounds <= 2) {
    auto k = run(0, items);
    r.time_us = k.time_us;
    r.dram_bytes = k.dram_read_bytes + k.dram_write_bytes;
    r.l2_read_bytes = l2rd(k);
    r.simulated_tiles = items;
  } else {
    // One full wave (steady state, all SMs busy) and the tail wave in detail; the full waves
    // between them take the full wave's span each. The launch overhead is counted once.
    auto full = run(0, round);
    int64_t tail_base = (rounds - 1) * round;
    auto tail = run(tail_base, items - tail_base);
    double span_full = full.time_us - full.launch_overhead_us, span_tail = tail.time_us - tail.launch_overhead_us;
    r.time_us = full.launch_overhead_us + double(rounds - 1) * span_full + span_tail;
    r.dram_bytes = uint64_t(double(rounds - 1) * double(full.dram_read_bytes + full.dram_write_bytes)) +
                   tail.dram_read_bytes + tail.dram_write_bytes;
    r.l2_read_bytes = uint64_t(double(rounds - 1) * double(l2rd(full))) + l2rd(tail);
    r.sampled = true;
    r.simulated_tiles = round + (items - tail_base);
  }
  r.tflops = 2.0 * double(p.M) * double(p.N) * double(p.K) / (r.time_us * 1e-6) / 1e12;
  return r;
}

}  // namespace gtsim::analytic
