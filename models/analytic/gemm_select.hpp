// `gtsim gemm`: pick a GEMM kernel configuration the way a library's heuristic does (cuBLAS,
// cuBLASLt's heuristic query), say why, and simulate the pick. The ranking is analytic (a closed form
// per candidate, microseconds each, no simulation): a heuristic built from the config's rates and the
// plan's tiles and waves, not a table of measured times. Only the pick (with autotune, the best three
// by score) is simulated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/analytic/gemm_plan.hpp"
#include "sim/config.hpp"

namespace gtsim::analytic {

// One kernel configuration (tile, schedule, split) and its analytic score. The terms are in us; the
// score is launch_us + max(compute_us, l2_us, dram_us) + load_us + reduce_us (gemm_select.cpp).
struct GemmCandidate {
  GemmPlan plan;
  double score_us = 0;
  std::string why;        // what decided, in words
  int64_t rounds = 0;     // work items on the busiest SM: ceil(items / SMs)
  double round_fill = 0;  // items / (rounds x SMs): how full the SMs' rounds are
  double launch_us = 0;   // launch.overhead_us per launch (split-k: two)
  double compute_us = 0;  // rounds x one item's MMA flops at the SM's mma.sync (or FFMA) rate
  double l2_us = 0;       // operand bytes from the L2: the busiest SM's port, or all SMs over the L2
  double dram_us = 0;     // each operand and C once over the HBM bandwidth
  double load_us = 0;     // narrow loads: extra load instructions, and waits of element loads (0 at 16 bytes)
  double reduce_us = 0;   // split-k: the reduction launch's bytes
  std::string bound;      // compute | L2 | DRAM: the largest of the three
  bool simulated = false;
  GemmTiming timing;  // when simulated
};

// Every tile of gemm_tile_menu(dtype) with the data-parallel and persistent schedules, and (bf16, as
// plan_gemm allows) split-k at the planner's split when the data-parallel tiles fill less than one
// wave; plans plan_gemm refuses or that cannot launch (0 CTAs per SM) are left out. Best score first
// (ties: the smaller memory time, then data-parallel before persistent before split-k, then menu order).
std::vector<GemmCandidate> rank_gemm_candidates(const ConfigNode& hw, int64_t M, int64_t N, int64_t K,
                                                const std::string& dtype = "bf16");

struct GemmSelection {
  std::vector<GemmCandidate> candidates;  // ranked, best score first; simulated ones carry their timing
  size_t pick = 0;                        // index into candidates
  GemmPlan plan;                          // candidates[pick].plan
  GemmTiming timing;                      // its simulation
  bool autotune = false, exact = false;
  std::string reason;  // why the pick: the top score, or the fastest of the simulated ones
};

// Ranks, then simulates the top candidate (autotune: the best three by score, keeping the fastest
// simulated). InputError when no candidate can run (e.g. a dtype the config has no rate for).
GemmSelection select_gemm(const ConfigNode& hw, int64_t M, int64_t N, int64_t K, const std::string& dtype = "bf16",
                          bool autotune = false, bool exact = false);

// The library kernel file the plan runs (gemm_persistent.kir, gemm_splitk.kir, gemm_fp32.kir).
std::string gemm_kernel_file(const GemmPlan& p);

}  // namespace gtsim::analytic
