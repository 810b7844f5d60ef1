#include "models/analytic/gemm_plan.hpp"

#include <algorithm>
#include <mutex>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/ops.hpp"
#include "kernels_ir/parser.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/occupancy.hpp"
#include "models/gpu/specs.hpp"
#include "sim/data_dir.hpp"

namespace gtsim::analytic {

const std::vector<GemmTile>& gemm_tile_menu(const std::string& dtype) {
  // Register counts follow the CUTLASS kernels of the same tile (8 warps, 3 stages): a 256x128
  // tile needs ~232 registers per thread, so one CTA per SM, as NVIDIA's guide says for the A100.
  static const std::vector<GemmTile> menu = {
      {256, 128, 32, 4, 2, 3, 232}, {128, 256, 32, 2, 4, 3, 232}, {128, 128, 32, 2, 4, 3, 128},
      {128, 64, 32, 4, 2, 3, 96},   {64, 128, 32, 2, 4, 3, 96},   {64, 64, 32, 2, 4, 3, 64},
  };
  // CUDA-core SGEMM tiles (gemm_fp32.kir, BK = 8, 256 threads of tm x tn). 128x128 (8 x 8 per
  // thread): 121 registers, ptxas's count for the twin (validation/cuda/gemm_fp32.cu, VEC 4), two
  // CTAs per SM; the smaller tiles are estimates by the same make-up (accumulators, operand
  // fragments, ~40 for addressing), more CTAs per SM.
  static const std::vector<GemmTile> fp32_menu = {
      {128, 128, 8, 0, 0, 1, 121, 8, 8},
      {128, 64, 8, 0, 0, 1, 88, 8, 4},
      {64, 128, 8, 0, 0, 1, 88, 4, 8},
      {64, 64, 8, 0, 0, 1, 64, 4, 4},
  };
  // The other tensor-core dtypes (gemm_persistent.kir's DT): the same shapes with BK = 64 bytes of K
  // (f16 32, tf32 16, e4m3 64 elements), so the same shared memory. No twin: the registers are the
  // bf16 kernels' (the same accumulators and fragment registers), an estimate.
  static const std::vector<GemmTile> f16_menu = menu;
  static const std::vector<GemmTile> tf32_menu = [] {
    auto m = menu;
    for (auto& t : m) t.bk = 16;
    return m;
  }();
  static const std::vector<GemmTile> e4m3_menu = [] {
    auto m = menu;
    for (auto& t : m) t.bk = 64;
    return m;
  }();
  const std::string dt = canonical_gemm_dtype(dtype);
  if (dt == "f32") return fp32_menu;
  if (dt == "f16") return f16_menu;
  if (dt == "tf32") return tf32_menu;
  if (dt == "e4m3") return e4m3_menu;
  return menu;
}

std::string canonical_gemm_dtype(const std::string& dtype) {
  for (const char* d : {"bf16", "f16", "tf32", "e4m3", "f32"})
    if (dtype == d) return dtype;
  if (dtype == "fp16") return "f16";
  if (dtype == "fp8") return "e4m3";
  if (dtype == "fp32") return "f32";
  throw InputError(SourcePos{"--dtype", 0, 0},
                   "gtsim waves simulates bf16, f16, tf32, e4m3 (tensor-core mma.sync) and f32 (CUDA-core FFMA) "
                   "GEMMs, got '" +
                       dtype + "'");
}

void check_gemm_dtype(const std::string& dtype) { canonical_gemm_dtype(dtype); }

int gemm_elem_bytes(const std::string& dtype) {
  const std::string dt = canonical_gemm_dtype(dtype);
  return dt == "e4m3" ? 1 : dt == "tf32" || dt == "f32" ? 4 : 2;
}

int gemm_dt_param(const std::string& dtype) {
  const std::string dt = canonical_gemm_dtype(dtype);
  return dt == "f16" ? 0 : dt == "bf16" ? 1 : dt == "tf32" ? 2 : dt == "e4m3" ? 3 : -1;
}

bool gemm_b_k_major(const std::string& dtype) {
  const std::string dt = canonical_gemm_dtype(dtype);
  return dt == "tf32" || dt == "e4m3";
}

std::string default_gemm_tile(const std::string& dtype) {
  canonical_gemm_dtype(dtype);  // InputError on an unknown dtype
  return "128x128";
}

GemmTile parse_tile(const std::string& s, const std::string& dtype) {
  for (const auto& t : gemm_tile_menu(dtype))
    if (t.str() == s) return t;
  std::string list;
  for (const auto& t : gemm_tile_menu(dtype)) list += (list.empty() ? "" : ", ") + t.str();
  throw InputError(SourcePos{"--tile", 0, 0},
                   "unknown " + canonical_gemm_dtype(dtype) + " tile '" + s + "', expected auto or one of " + list);
}

const std::vector<GemmTile>& gemm_wgmma_menu() {
  // {bm, bn, bk, warps_m, warps_n, stages, regs, tm, tn, cluster}: stages = what fits in 227 KB
  static const std::vector<GemmTile> menu = {
      {128, 256, 64, 2, 1, 4, 168, 0, 0, 2}, {128, 256, 64, 2, 1, 4, 168, 0, 0, 1},
      {128, 192, 64, 2, 1, 5, 168, 0, 0, 2}, {128, 192, 64, 2, 1, 5, 168, 0, 0, 1},
      {128, 128, 64, 2, 1, 6, 168, 0, 0, 2}, {128, 128, 64, 2, 1, 6, 168, 0, 0, 1},
      {128, 64, 64, 2, 1, 8, 168, 0, 0, 2},  {128, 64, 64, 2, 1, 8, 168, 0, 0, 1},
  };
  return menu;
}

GemmTile parse_wgmma_tile(const std::string& s) {
  // BMxBN (the cluster-of-2 variant) or BMxBNxC1 / xC2
  for (const auto& t : gemm_wgmma_menu())
    if (t.str() == s || t.str() + "xC" + std::to_string(t.cluster) == s) return t;
  std::string list;
  for (const auto& t : gemm_wgmma_menu())
    list += (list.empty() ? "" : ", ") + t.str() + "xC" + std::to_string(t.cluster);
  throw InputError(SourcePos{"--tile", 0, 0}, "unknown warp-specialized tile '" + s + "', expected auto or one of " +
                                                  list + " (BMxBN alone: the cluster of 2)");
}

const std::vector<GemmTile>& gemm_align1_menu() {
  // {bm, bn, bk, warps_m, warps_n, stages, regs}: ncu's registers of cutlass_75_tensorop_bf16_s1688gemm_bf16_
  // 256x128 / 128x128 *_align1 (validation/data/library/h100/b45/kernels_picked.csv)
  static const std::vector<GemmTile> menu = {{256, 128, 32, 4, 2, 2, 229}, {128, 128, 32, 2, 4, 2, 252}};
  return menu;
}

GemmTile parse_align1_tile(const std::string& s) {
  for (const auto& t : gemm_align1_menu())
    if (t.str() == s) return t;
  throw InputError(SourcePos{"--tile", 0, 0}, "unknown align1 tile '" + s + "', expected auto, 256x128 or 128x128");
}

GemmSchedule parse_schedule(const std::string& s) {
  if (s == "data-parallel") return GemmSchedule::kDataParallel;
  if (s == "persistent") return GemmSchedule::kPersistent;
  if (s == "split-k") return GemmSchedule::kSplitK;
  if (s == "warp-specialized") return GemmSchedule::kWarpSpecialized;
  if (s == "align1") return GemmSchedule::kAlign1;
  throw InputError(SourcePos{"--schedule", 0, 0}, "unknown schedule '" + s +
                                                      "', expected data-parallel, persistent, split-k, "
                                                      "warp-specialized or align1");
}

std::string schedule_name(GemmSchedule s) {
  switch (s) {
    case GemmSchedule::kDataParallel:
      return "data-parallel";
    case GemmSchedule::kPersistent:
      return "persistent";
    case GemmSchedule::kSplitK:
      return "split-k";
    case GemmSchedule::kWarpSpecialized:
      return "warp-specialized";
    case GemmSchedule::kAlign1:
      return "align1";
  }
  return "?";
}

int vector_elems(int64_t ld) { return vector_elems(ld, 2); }

int vector_elems(int64_t ld, int elem_bytes) {
  for (int bytes : {16, 8, 4})
    if (bytes >= elem_bytes && ld % (bytes / elem_bytes) == 0) return bytes / elem_bytes;
  return 1;
}

namespace {
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
uint32_t smem_bytes(const GemmTile& t, int elem_bytes, GemmSchedule sched) {
  if (sched == GemmSchedule::kWarpSpecialized)  // gemm_wgmma.kir: unpadded swizzled stages, 2 mbarriers each
    return uint32_t(t.stages * (t.bm * t.bk + t.bk * t.bn) * elem_bytes + 16 * t.stages + 96);
  if (t.tm > 0) return uint32_t((t.bm * t.bk + t.bk * t.bn) * 4);  // gemm_fp32.kir
  if (sched == GemmSchedule::kAlign1)  // gemm_align1.kir: two stages, rows padded by 16 bytes
    return uint32_t(2 * (t.bm * (t.bk + 8) + t.bk * (t.bn + 8)) * 2 + t.warps_m * 16 * (t.bn + 4) * 4);
  // gemm_persistent.kir / gemm_splitk.kir: rows padded by 16 bytes
  if (elem_bytes == 2) return uint32_t(t.stages * (t.bm * (t.bk + 8) + t.bk * (t.bn + 8)) * 2);
  return uint32_t(t.stages * (t.bm + t.bn) * (t.bk * elem_bytes + 16));  // K-major B: BN rows of BK
}
const ir::Kernel& library_kernel(int which) {
  static const char* files[] = {"gemm_persistent", "gemm_splitk", "gemm_fp32", "gemm_wgmma", "gemm_align1"};
  static std::once_flag once[5];
  static std::unique_ptr<ir::Kernel> k[5];
  std::call_once(once[which], [which] {
    k[which] = ir::parse_kernel_file(data_path(std::string("kernels_ir/lib/") + files[which] + ".kir"));
  });
  return *k[which];
}
}  // namespace

nlohmann::json GemmPlan::to_json() const {
  nlohmann::json j;
  j["gemm"] = {{"M", M}, {"N", N}, {"K", K}};
  j["dtype"] = dtype;
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
  if (schedule == GemmSchedule::kPersistent) {
    j["tiles_per_cta_max"] = tiles_per_cta_max;
    j["tiles_per_cta_min"] = tiles_per_cta_min;
  }
  if (schedule == GemmSchedule::kSplitK || schedule == GemmSchedule::kAlign1) j["ksplit"] = ksplit;
  if (schedule == GemmSchedule::kWarpSpecialized) {
    j["cluster"] = tile.cluster;
    j["tiles_per_cta_max"] = tiles_per_cta_max;
    j["tiles_per_cta_min"] = tiles_per_cta_min;
  }
  j["tile_efficiency"] = tile_efficiency;
  j["vector_bytes"] = vector_bytes;
  j["aligned"] = aligned();
  return j;
}

GemmPlan plan_gemm(const ConfigNode& hw, int64_t M, int64_t N, int64_t K, const GemmTile& tile_arg, GemmSchedule sched,
                   int64_t split, const std::string& dtype) {
  GemmTile tile = tile_arg;
  if (M < 1 || N < 1 || K < 1) throw InputError(SourcePos{"--gemm", 0, 0}, "GEMM dimensions must be >= 1");
  const std::string dt = canonical_gemm_dtype(dtype);
  const bool fp32 = dt == "f32";
  const int es = gemm_elem_bytes(dt);
  if (fp32 != (tile.tm > 0))
    throw InputError(SourcePos{"--tile", 0, 0}, "tile " + tile.str() + " is not a " + dtype + " tile");
  if (fp32 && sched != GemmSchedule::kDataParallel)
    throw InputError(SourcePos{"--schedule", 0, 0},
                     "the f32 GEMM (gemm_fp32.kir) runs data-parallel only, got " + schedule_name(sched));
  if (sched == GemmSchedule::kAlign1 && dt != "bf16")
    throw InputError(SourcePos{"--schedule", 0, 0}, "align1 (gemm_align1.kir) is bf16 only, got dtype " + dt +
                                                        " (or --schedule data-parallel | persistent)");
  if (sched == GemmSchedule::kSplitK && dt != "bf16")
    throw InputError(SourcePos{"--schedule", 0, 0}, "split-k (gemm_splitk.kir) is not available for dtype " + dt +
                                                        ", expected bf16 (or --schedule data-parallel | persistent)");
  if (split < 0 || (split > 0 && sched != GemmSchedule::kSplitK && sched != GemmSchedule::kAlign1))
    throw InputError(SourcePos{"--split", 0, 0}, "--split N (N >= 1) goes with --schedule split-k or align1");
  auto specs = gpu::GpuSpecs::parse(hw);
  hw.mark_used_recursively();
  const bool ws = sched == GemmSchedule::kWarpSpecialized;
  if (ws) {
    if (dt != "bf16" && dt != "e4m3")
      throw InputError(SourcePos{"--schedule", 0, 0},
                       "warp-specialized (gemm_wgmma.kir) is bf16 or e4m3 (fp8), got dtype " + dt);
    const auto ir_dt = ir::parse_dtype(dt);
    if (!ir_dt || specs.sm.tensor.wgmma_flops_per_cycle[size_t(*ir_dt)] <= 0)
      throw InputError(SourcePos{"--schedule", 0, 0}, "this machine (" + specs.name +
                                                          ") has no wgmma (sm.tensor.wgmma_flops_per_cycle has no " +
                                                          dt + " rate), expected a Hopper config for warp-specialized");
    // TMA's 16-byte rows: A's rows are K long, B's N (bf16, row-major) or K (e4m3, K-major); C's
    // epilogue stores 16-byte rows of N bf16
    const int64_t row_elems = 16 / es;
    if (K % row_elems != 0 || N % 8 != 0)
      throw InputError(SourcePos{"--schedule", 0, 0}, "warp-specialized needs TMA's 16-byte rows: K a multiple of " +
                                                          std::to_string(row_elems) + " and N of 8 " + dt +
                                                          " elements, got K = " + std::to_string(K) +
                                                          ", N = " + std::to_string(N));
    tile.bk = 128 / es;  // 128-byte rows of K: bf16 64, e4m3 128
  }
  if (!fp32 && !ws) {  // the simulator would stop at the first mma.sync: say so before planning
    auto ir_dt = ir::parse_dtype(dt);
    if (!ir_dt || specs.sm.tensor.mma_sync_flops_per_cycle[size_t(*ir_dt)] <= 0)
      throw InputError(SourcePos{"--dtype", 0, 0},
                       "this machine (" + specs.name + ") has no mma.sync rate for dtype " + dt +
                           " (sm.tensor.mma_sync_flops_per_cycle in the config), expected a dtype it lists");
  }
  GemmPlan p;
  p.M = M, p.N = N, p.K = K, p.tile = tile, p.schedule = sched, p.dtype = dt;
  p.tiles_m = cdiv(M, tile.bm), p.tiles_n = cdiv(N, tile.bn), p.tiles = p.tiles_m * p.tiles_n;
  const bool a1 = sched == GemmSchedule::kAlign1;
  const int which = a1 ? 4 : ws ? 3 : fp32 ? 2 : sched == GemmSchedule::kSplitK ? 1 : 0;
  static const char* names[] = {"gemm_persistent", "gemm_splitk", "gemm_fp32", "gemm_wgmma", "gemm_align1"};
  auto occ =
      gpu::compute_occupancy(specs.sm, specs.l1_unified_kb,
                             gpu::KernelShape{ws ? 128u * 3u : 256u, uint32_t(tile.regs), smem_bytes(tile, es, sched)},
                             names[which], [&] { return gpu::occupancy_source(library_kernel(which)); });
  p.sms = specs.sm.count;
  p.ctas_per_sm = occ.ctas_per_sm;
  p.occupancy_limiter = occ.limiter;
  p.wave_size = int64_t(p.sms) * p.ctas_per_sm;
  p.waves = cdiv(p.tiles, p.wave_size);
  int64_t last = p.tiles - (p.waves - 1) * p.wave_size;
  p.last_wave_fill = double(last) / double(p.wave_size);
  p.tile_efficiency = double(M) * double(N) / (double(p.tiles_m * tile.bm) * double(p.tiles_n * tile.bn));
  if (fp32) {  // gemm_fp32.kir: v4 when K and N are multiples of 4, else scalar
    p.vec_a = p.vec_b = K % 4 == 0 && N % 4 == 0 ? 4 : 1;
    p.vector_bytes = p.vec_a * 4;
  } else {  // by bytes: A rows are K long; B rows N (row-major B) or K (K-major B: tf32, e4m3)
    p.vec_a = vector_elems(K, es), p.vec_b = vector_elems(gemm_b_k_major(dt) ? K : N, es);
    p.vector_bytes = std::min(p.vec_a, p.vec_b) * es;
  }
  int64_t items = p.tiles;
  if (a1) {  // K slices as asked (0 or 1: none); the selection scores 1 .. 4
    const int64_t ksteps = cdiv(K, tile.bk);
    int64_t ks = std::clamp<int64_t>(split, 1, ksteps);
    ks = cdiv(ksteps, cdiv(ksteps, ks));
    items *= ks;
    p.ksplit = ks;
    p.tiles_per_cta_max = p.tiles_per_cta_min = ks;
  }
  if (sched == GemmSchedule::kSplitK) {
    // Enough K slices to fill one wave, at least 4 BK steps per slice (or --split N, at most one
    // slice per BK step). A slice count that does not divide the BK steps leaves the last slice short.
    const int64_t ksteps = cdiv(K, tile.bk);
    int64_t ks = split > 0 ? std::min(split, ksteps)
                           : std::clamp<int64_t>(p.wave_size / std::max<int64_t>(p.tiles, 1), 1,
                                                 std::max<int64_t>(ksteps / 4, 1));
    ks = cdiv(ksteps, cdiv(ksteps, ks));  // no empty slice: every slice has cdiv(ksteps, ks) steps but the last
    items *= ks;
    p.ksplit = ks;
    p.tiles_per_cta_max = ks;  // reported as K slices per tile
  }
  if (sched == GemmSchedule::kDataParallel || sched == GemmSchedule::kSplitK || a1) {
    p.grid = items;
    p.waves = cdiv(items, p.wave_size);
    p.last_wave_fill = double(items - (p.waves - 1) * p.wave_size) / double(p.wave_size);
    if (sched == GemmSchedule::kSplitK) p.tiles_per_cta_min = p.tiles_per_cta_max;
  } else if (ws) {  // work items: a cluster's tiles (cluster rows of tiles x one column)
    const int64_t cl = std::max(tile.cluster, 1);
    items = cdiv(p.tiles_m, cl) * p.tiles_n;
    const int64_t clusters = std::max<int64_t>(p.wave_size / cl, 1);
    p.grid = std::min(items, clusters) * cl;
    p.tiles_per_cta_max = cdiv(items, p.grid / cl);
    p.tiles_per_cta_min = items / (p.grid / cl);
  } else {
    p.grid = std::min(items, p.wave_size);
    p.tiles_per_cta_max = cdiv(items, p.grid);
    p.tiles_per_cta_min = items / p.grid;
  }
  return p;
}

const ir::Kernel& gemm_kernel() { return library_kernel(0); }

const ir::Kernel& gemm_kernel(const GemmPlan& p) {
  if (p.schedule == GemmSchedule::kAlign1) return library_kernel(4);
  if (p.schedule == GemmSchedule::kWarpSpecialized) return library_kernel(3);
  if (p.dtype == "f32") return library_kernel(2);
  return library_kernel(p.schedule == GemmSchedule::kSplitK ? 1 : 0);
}

ir::ParamValues gemm_params(const GemmPlan& p, int64_t base, int64_t count) {
  const auto& t = p.tile;
  if (p.dtype == "f32")
    return {{"M", p.M},   {"N", p.N},   {"K", p.K},       {"BM", t.bm},        {"BN", t.bn},         {"BK", t.bk},
            {"TM", t.tm}, {"TN", t.tn}, {"REGS", t.regs}, {"TILE_BASE", base}, {"TILE_COUNT", count}};
  if (p.schedule == GemmSchedule::kWarpSpecialized)  // gemm_wgmma.kir: work items are a cluster's tiles
    return {{"M", p.M},
            {"N", p.N},
            {"K", p.K},
            {"DT", gemm_dt_param(p.dtype)},
            {"BM", t.bm},
            {"BN", t.bn},
            {"BK", t.bk},
            {"STAGES", t.stages},
            {"CONSUMERS", 2},
            {"CLUSTER", t.cluster},
            {"GRID", std::min(count, p.grid / std::max(t.cluster, 1)) * std::max(t.cluster, 1)},
            {"REGS", t.regs},
            {"TILE_BASE", base},
            {"TILE_COUNT", count}};
  // the tensor-core kernels (data-parallel, persistent, split-K) share every parameter but the
  // schedule's own: GRID for the persistent loop, PHASE for split-K's partial/reduce launches
  ir::ParamValues v = {{"M", p.M},
                       {"N", p.N},
                       {"K", p.K},
                       {"BM", t.bm},
                       {"BN", t.bn},
                       {"BK", t.bk},
                       {"WARPS_M", t.warps_m},
                       {"WARPS_N", t.warps_n},
                       {"STAGES", t.stages},
                       {"REGS", t.regs},
                       {"VEC_A", p.vec_a},
                       {"VEC_B", p.vec_b},
                       {"TILE_BASE", base},
                       {"TILE_COUNT", count}};
  if (p.schedule == GemmSchedule::kAlign1) {  // gemm_align1.kir: two stages, no STAGES parameter
    v.erase("STAGES");
    v["KSPLIT"] = p.ksplit;
    v["PHASE"] = 0;
    return v;
  }
  if (p.schedule == GemmSchedule::kSplitK) {
    v["KSPLIT"] = p.ksplit;
    v["PHASE"] = 0;
    return v;
  }
  v["GRID"] = p.schedule == GemmSchedule::kPersistent ? std::min(count, p.grid) : count;
  v["KSPLIT"] = 1;
  v["DT"] = gemm_dt_param(p.dtype);  // gemm_persistent.kir only (gemm_splitk.kir is bf16)
  return v;
}

ir::ParamValues gemm_reduce_params(const GemmPlan& p) {
  ir::ParamValues v = gemm_params(p, 0, 1);
  v["PHASE"] = 1;
  return v;
}

int64_t gemm_work_items(const GemmPlan& p) {
  if (p.schedule == GemmSchedule::kSplitK || p.schedule == GemmSchedule::kAlign1) return p.tiles * p.ksplit;
  if (p.schedule == GemmSchedule::kWarpSpecialized) return cdiv(p.tiles_m, std::max(p.tile.cluster, 1)) * p.tiles_n;
  return p.tiles;
}

bool gemm_has_reduce(const GemmPlan& p) {
  return (p.schedule == GemmSchedule::kSplitK || p.schedule == GemmSchedule::kAlign1) && p.ksplit > 1;
}

GemmTiming simulate_gemm(const ConfigNode& hw, const GemmPlan& p, bool exact) {
  const int64_t items = gemm_work_items(p);
  const ir::Kernel& kernel = gemm_kernel(p);
  GemmTiming r;
  auto l2rd = [](const gpu::KernelResult& k) {
    auto it = k.metrics.find("lts__t_sectors_srcunit_tex_op_read.sum");
    return it == k.metrics.end() ? uint64_t(0) : it->get<uint64_t>() * 32;
  };
  gpu::GpuModel m(hw);
  gpu::SamplingPolicy sampling;
  sampling.exact = exact;
  m.set_sampling(sampling);
  auto k = m.run(*ir::Program::build(kernel, gemm_params(p, 0, items)));
  r.time_us = k.time_us;
  r.dram_bytes = k.dram_read_bytes + k.dram_write_bytes;
  r.l2_read_bytes = l2rd(k);
  r.sampled = k.sampling.fraction_simulated < 1.0;
  r.fraction_simulated = k.sampling.fraction_simulated;
  r.estimated_error_pct = k.sampling.estimated_error_pct;
  if (gemm_has_reduce(p)) {  // the reduction launch: the workspace is in the L2, as on hardware
    auto red = m.run(*ir::Program::build(kernel, gemm_reduce_params(p)));
    r.reduce_us = red.time_us;
    r.time_us += red.time_us;
    r.dram_bytes += red.dram_read_bytes + red.dram_write_bytes;
    r.l2_read_bytes += l2rd(red);
  }
  r.tflops = 2.0 * double(p.M) * double(p.N) * double(p.K) / (r.time_us * 1e-6) / 1e12;
  return r;
}

}  // namespace gtsim::analytic
