// `gtsim waves`: tile / wave / alignment report for one GEMM shape, with its simulated time and
// nearby padded shapes that remove a partial wave, a partial tile or a misalignment.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "models/analytic/gemm_plan.hpp"
#include "sim/config.hpp"

namespace gtsim::analytic {

struct WavesRequest {
  int64_t M = 0, N = 0, K = 0;  // --gemm MxNxK
  std::string tile;             // --tile BMxBN | auto; empty: default_gemm_tile (128x128), or with no schedule
                                // either, the kernel `gtsim gemm` picks (tile, schedule and split)
  std::string schedule;         // --schedule data-parallel (the default with a tile) | persistent | split-k |
                                // warp-specialized | align1
  int64_t split = 0;            // --split N: K slices per tile (split-k); 0 = the planner's choice
  std::string dtype = "bf16";   // --dtype bf16 | f16 | tf32 | e4m3 (tensor cores) | f32 (CUDA cores,
                                // gemm_fp32.kir); aliases fp16, fp8, fp32
  bool simulate = true;         // false: closed forms only (no time_us)
  bool exact = false;           // --exact: no wave sampling
  bool suggestions = true;
};
// Parses "MxNxK" (InputError otherwise).
void parse_gemm_shape(const std::string& s, WavesRequest& r);

struct WavesReport {
  nlohmann::json json;  // keys: tiles, ctas_per_sm, wave_size, waves, last_wave_fill, tile_efficiency,
                        // vector_bytes, time_us, suggestions[], plus tile, schedule, grid, tflops, sampled
  std::string text;     // the same as a table for the terminal
};

WavesReport waves(const ConfigNode& hw, const WavesRequest& req);

}  // namespace gtsim::analytic
