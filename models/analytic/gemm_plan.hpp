// GEMM tile, wave and alignment math (P8, P9, P10) and the simulated GEMM run behind `gtsim waves`.
// Closed forms here are what the simulation is checked against; time_us always comes from GpuModel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels_ir/exec/program.hpp"
#include "sim/config.hpp"

namespace gtsim::analytic {

// A CTA tile of kernels_ir/lib/gemm_persistent.kir (8 warps of 32 threads).
struct GemmTile {
  int bm = 256, bn = 128, bk = 32;
  int warps_m = 4, warps_n = 2;
  int stages = 3;
  int regs = 232;  // registers per thread, as the matching CUTLASS/cuBLAS kernel (ptxas)
  std::string str() const { return std::to_string(bm) + "x" + std::to_string(bn); }
};
// The tiles `--tile auto` tries; parse_tile("256x128") picks one of them by shape.
const std::vector<GemmTile>& gemm_tile_menu();
GemmTile parse_tile(const std::string& s);  // InputError when no menu tile has that shape

enum class GemmSchedule { kDataParallel, kPersistent, kSplitK };
GemmSchedule parse_schedule(const std::string& s);
std::string schedule_name(GemmSchedule s);

struct GemmPlan {
  int64_t M = 0, N = 0, K = 0;
  GemmTile tile;
  GemmSchedule schedule = GemmSchedule::kDataParallel;
  int64_t tiles_m = 0, tiles_n = 0, tiles = 0;
  uint32_t sms = 0, ctas_per_sm = 0;
  std::string occupancy_limiter;
  int64_t wave_size = 0;     // SMs x CTAs per SM
  int64_t waves = 0;         // ceil(tiles / wave_size)
  double last_wave_fill = 0; // tiles in the last wave / wave_size
  int64_t grid = 0;          // CTAs launched
  int64_t tiles_per_cta_max = 0, tiles_per_cta_min = 0;  // persistent: the quantization
  double tile_efficiency = 0;  // useful M*N / tiled M*N
  int vec_a = 8, vec_b = 8;    // elements per global load of A rows (K) and B rows (N)
  int vector_bytes = 16;       // the narrower of the two, in bytes (bf16)
  bool aligned() const { return vector_bytes >= 16; }
  nlohmann::json to_json() const;
};

// Tiles, occupancy (from the config's SM limits and the kernel's regs/smem), waves, alignment.
GemmPlan plan_gemm(const ConfigNode& hw, int64_t M, int64_t N, int64_t K, const GemmTile& tile,
                   GemmSchedule schedule);

// Parameters of gemm_persistent.kir for a launch covering tiles [base, base + count).
ir::ParamValues gemm_params(const GemmPlan& p, int64_t base, int64_t count);
// The parsed library kernel (cached per process).
const ir::Kernel& gemm_kernel();

struct GemmTiming {
  double time_us = 0;          // launch overhead + simulated span (extrapolated when sampled)
  bool sampled = false;
  int64_t simulated_tiles = 0;
  uint64_t dram_bytes = 0;     // extrapolated like the time
  uint64_t l2_read_bytes = 0;  // sectors the SMs read from the L2 (operand traffic, P8), extrapolated
  double tflops = 0;
};
// Runs the GEMM on a fresh GpuModel. Sampling (unless exact): when there are more than two
// waves, one full wave and the tail wave are simulated in detail and the full waves scaled.
GemmTiming simulate_gemm(const ConfigNode& hw, const GemmPlan& p, bool exact = false);

// Largest of 8, 4, 2, 1 elements (bf16: 16, 8, 4, 2 bytes) that divides the leading dimension.
int vector_elems(int64_t leading_dim);

}  // namespace gtsim::analytic
