// GEMM tile, wave and alignment math (P8, P9, P10) and the simulated GEMM run behind `gtsim waves`.
// Closed forms here are what the simulation is checked against; time_us always comes from GpuModel.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "sim/config.hpp"

namespace gtsim::analytic {

// A CTA tile (256 threads). Tensor cores (bf16, f16, tf32, e4m3): kernels_ir/lib/gemm_persistent.kir
// (DT) / gemm_splitk.kir (bf16), 8 warps as warps_m x warps_n, bk in elements (64 bytes of K).
// f32 (tm > 0): kernels_ir/lib/gemm_fp32.kir, each thread a tm x tn block of C.
struct GemmTile {
  int bm = 256, bn = 128, bk = 32;
  int warps_m = 4, warps_n = 2;
  int stages = 3;
  int regs = 232;      // registers per thread, as the matching CUTLASS/cuBLAS kernel (ptxas)
  int tm = 0, tn = 0;  // f32 CUDA-core tiles: rows and columns of C per thread (0: a tensor-core tile)
  int cluster = 1;     // warp-specialized (gemm_wgmma.kir): CTAs per cluster sharing B by TMA multicast
  std::string str() const { return std::to_string(bm) + "x" + std::to_string(bn); }
};
// Hopper's warp-specialized TMA + wgmma tiles (gemm_wgmma.kir; bf16; 384 threads: a producer and two
// consumer warpgroups, BK = 64, as many stages as fit in 227 KB of shared memory), each with and without
// a cluster of 2. Registers 168 per thread: the nvjet_sm90 kernels' count (validation/data/library/h100/b45/
// kernels_picked.csv, ncu's launch__registers_per_thread).
const std::vector<GemmTile>& gemm_wgmma_menu();
// "128x256" (the cluster-of-2 variant), "128x256xC1" or "128x256xC2"; InputError otherwise.
GemmTile parse_wgmma_tile(const std::string& s);
// The align1 kernel's tiles (gemm_align1.kir; bf16, 256 threads, BK = 32, two stages): 256x128 (229
// registers) and 128x128 (252), ncu's counts of cuBLAS's cutlass_75 align1 kernels (kernels_picked.csv).
const std::vector<GemmTile>& gemm_align1_menu();
GemmTile parse_align1_tile(const std::string& s);  // "256x128" or "128x128"; InputError otherwise
// The tiles `--tile auto` tries for a dtype (bf16, f16, tf32, e4m3: tensor-core mma.sync, the same
// shapes with BK = 64 bytes of K; f32: CUDA-core FFMA); parse_tile("256x128", dtype) picks one of
// them by shape.
const std::vector<GemmTile>& gemm_tile_menu(const std::string& dtype = "bf16");
// The tile a GEMM of `dtype` gets unless one is asked for, the same in `gtsim waves`, `workload` and
// `compare` (one number for one question): 128x128, in every dtype's menu (two CTAs per SM on the
// A100 and H100/H200 with bf16; 256x128 has one and loses on small and mid-size GEMMs: 2048^3 on the
// A100 139 against 166 us). `--tile auto` simulates the menu.
std::string default_gemm_tile(const std::string& dtype);
GemmTile parse_tile(const std::string& s,
                    const std::string& dtype = "bf16");  // InputError when no menu tile has that shape
// The canonical name of a dtype `gtsim waves` simulates: bf16, f16 (alias fp16), tf32, e4m3 (alias
// fp8), f32 (alias fp32); InputError otherwise.
std::string canonical_gemm_dtype(const std::string& dtype);
// InputError unless canonical_gemm_dtype accepts dtype.
void check_gemm_dtype(const std::string& dtype);
// Bytes per input element (bf16/f16 2, tf32 4, e4m3 1, f32 4) and the kernels' DT parameter
// (0 f16, 1 bf16, 2 tf32, 3 e4m3; -1 for f32, which is gemm_fp32.kir).
int gemm_elem_bytes(const std::string& dtype);
int gemm_dt_param(const std::string& dtype);
// True when B is K-major ([N, K], the TN layout): tf32 and e4m3 (gemm_persistent.kir's fragments).
bool gemm_b_k_major(const std::string& dtype);

// kWarpSpecialized: gemm_wgmma.kir (Hopper: TMA + wgmma, persistent, one CTA per SM, clusters).
// kAlign1: gemm_align1.kir, cuBLAS's fallback for rows that break 16-byte alignment (cutlass_75 s1688
// align1: mma.sync m16n8k8, element loads pipelined through registers, two stages, split-K by K slices
// with a reduction launch when ksplit > 1).
enum class GemmSchedule { kDataParallel, kPersistent, kSplitK, kWarpSpecialized, kAlign1 };
GemmSchedule parse_schedule(const std::string& s);
std::string schedule_name(GemmSchedule s);

struct GemmPlan {
  int64_t M = 0, N = 0, K = 0;
  std::string dtype = "bf16";  // bf16, f16, tf32, e4m3 (tensor cores) or f32 (CUDA cores, gemm_fp32.kir)
  GemmTile tile;
  GemmSchedule schedule = GemmSchedule::kDataParallel;
  int64_t tiles_m = 0, tiles_n = 0, tiles = 0;
  uint32_t sms = 0, ctas_per_sm = 0;
  std::string occupancy_limiter;
  int64_t wave_size = 0;                                 // SMs x CTAs per SM
  int64_t waves = 0;                                     // ceil(tiles / wave_size)
  double last_wave_fill = 0;                             // tiles in the last wave / wave_size
  int64_t grid = 0;                                      // CTAs launched
  int64_t tiles_per_cta_max = 0, tiles_per_cta_min = 0;  // persistent: the quantization; split-k: ksplit
  int64_t ksplit = 1;          // split-k and align1: K slices per output tile (gemm_splitk.kir, gemm_align1.kir)
  double tile_efficiency = 0;  // useful M*N / tiled M*N
  int vec_a = 8, vec_b = 8;    // elements per global load of A rows (K) and B rows (N; K-major B: K)
  int vector_bytes = 16;       // the narrower of the two, in bytes
  bool aligned() const { return vector_bytes >= 16; }
  // The tile as the commands name it: BMxBN, and for warp-specialized plans its cluster, BMxBNxC2.
  std::string tile_name() const {
    return schedule == GemmSchedule::kWarpSpecialized ? tile.str() + "xC" + std::to_string(tile.cluster) : tile.str();
  }
  nlohmann::json to_json() const;
};

// Tiles, occupancy (from the config's SM limits and the kernel's regs/smem), waves, alignment.
// split (split-k only): K slices per tile; 0 lets the planner choose (enough slices to fill one
// wave, at least 4 BK steps per slice). dtype "f32" plans gemm_fp32.kir (data-parallel only); split-k
// is bf16 only (gemm_splitk.kir). A tensor-core dtype the config has no mma.sync rate for is an
// InputError. warp-specialized (gemm_wgmma.kir) is bf16 on a config with a wgmma rate, with TMA's
// alignment (K and N multiples of 8 elements: 16-byte rows), else an InputError saying which rule.
GemmPlan plan_gemm(const ConfigNode& hw, int64_t M, int64_t N, int64_t K, const GemmTile& tile, GemmSchedule schedule,
                   int64_t split = 0, const std::string& dtype = "bf16");

// Parameters of the plan's kernel for a launch covering work items [base, base + count) (tiles, or
// for split-k (tile, K slice) pairs: phase 0 of gemm_splitk.kir).
ir::ParamValues gemm_params(const GemmPlan& p, int64_t base, int64_t count);
// The work items of the plan's main launch: tiles, (tile, K slice) pairs for split-k and align1, a
// cluster's tiles for warp-specialized; gemm_params(p, 0, gemm_work_items(p)) launches all of them.
int64_t gemm_work_items(const GemmPlan& p);
// True when the plan runs a second, reduction launch (split-k or align1 with ksplit > 1).
bool gemm_has_reduce(const GemmPlan& p);
// Split-k with ksplit > 1: the reduction launch (phase 1 of gemm_splitk.kir / gemm_align1.kir).
ir::ParamValues gemm_reduce_params(const GemmPlan& p);
// The parsed library kernels (cached per process): gemm_persistent.kir, and the plan's kernel
// (gemm_persistent.kir, gemm_splitk.kir for split-k, gemm_fp32.kir for f32).
const ir::Kernel& gemm_kernel();
const ir::Kernel& gemm_kernel(const GemmPlan& p);

struct GemmTiming {
  double time_us = 0;  // launch overhead + simulated span (fast-forwarded parts extrapolated when sampled)
  bool sampled = false;
  double fraction_simulated = 1.0;  // of the warp instructions (models/gpu/sampler.hpp)
  double estimated_error_pct = 0;
  uint64_t dram_bytes = 0;     // extrapolated like the time
  uint64_t l2_read_bytes = 0;  // sectors the SMs read from the L2 (operand traffic, P8), extrapolated
  double tflops = 0;
  double reduce_us = 0;  // split-k: the reduction launch (included in time_us)
};
// Runs the GEMM on a fresh GpuModel, sampled by the engine unless exact (docs/sampling.md).
// Split-k: the partial GEMMs, then the reduction launch on the same machine.
GemmTiming simulate_gemm(const ConfigNode& hw, const GemmPlan& p, bool exact = false);

// Largest of 8, 4, 2, 1 elements (bf16: 16, 8, 4, 2 bytes) that divides the leading dimension.
int vector_elems(int64_t leading_dim);
// The same in bytes for any element size: elements per global access of a row whose leading
// dimension is leading_dim, the widest 16-, 8- or 4-byte vector (cp.async) that divides it, else one
// element (e4m3: 16 bytes need leading_dim % 16 == 0; tf32: 4 bytes are always possible).
int vector_elems(int64_t leading_dim, int elem_bytes);

}  // namespace gtsim::analytic
