// `gtsim workload`: a workload's kernels run in order on one GpuModel (L2 contents carry over),
// with the config's launch overhead between kernels or, in CUDA-graph mode, without it.
// Per kernel: time and share of the total (P14), DRAM bytes, FLOPs, arithmetic intensity, bound.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels_ir/graph/workload.hpp"
#include "models/gpu/timeline.hpp"
#include "sim/config.hpp"

namespace gtsim::analytic {

struct WorkloadRunOptions {
  bool fusion = true;       // run the elementwise fusion pass (P5)
  bool recompute = true;    // honour the ops' `recompute:` policy (P6)
  bool cuda_graph = false;  // one launch for the whole sequence: no per-kernel launch gaps
  bool carry_l2 = true;     // false: every kernel on a fresh machine (cold L2), for comparison
  bool exact = false;       // no sampling (models/gpu/sampler.hpp): every CTA and loop iteration simulated
  std::string gemm_tile;    // BMxBN (mma.sync, data-parallel, as `gtsim waves`) for every matmul; empty: the
                            // kernel `gtsim gemm` picks for each (rank_gemm_candidates' best score)
  std::optional<gpu::TimelineOptions> timeline;  // record a timeline (`--trace`): WorkloadReport::timeline
};

struct KernelRecord {
  std::string kernel, op, kind;
  double time_us = 0;  // including its launch overhead (0 in CUDA-graph mode)
  double share = 0;    // of the workload total
  uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  uint64_t l2_dirty_bytes_at_end = 0;  // stores still dirty in the L2 when it ends (docs/units.md)
  uint64_t min_bytes = 0;              // each input read once + each output written once
  uint64_t flops = 0;
  double intensity = 0;  // flops / DRAM bytes moved
  std::string bound;     // "memory" or "compute": intensity against the machine's ridge point
  bool sampled = false;  // the engine fast-forwarded part of it (docs/sampling.md)
  double fraction_simulated = 1.0, estimated_error_pct = 0;
  double l2_hit_rate = 0;
};

struct WorkloadReport {
  std::vector<KernelRecord> kernels;
  double total_us = 0;
  uint64_t dram_bytes = 0;
  uint64_t l2_dirty_bytes_at_end = 0;  // the last kernel's (one L2 carried), or every kernel's
  double ridge_flops_per_byte = 0;
  nlohmann::json json;
  std::string text;
  nlohmann::json timeline;  // Chrome trace-event JSON when WorkloadRunOptions::timeline was set
};

// Passes (per the options) on a copy, lowering, and simulation.
WorkloadReport run_workload(const ConfigNode& hw, const wl::Workload& w, const WorkloadRunOptions& opt);

// Peak dense FLOP/s for a dtype and HBM bandwidth from the config (datasheet roofline).
double config_peak_flops(const ConfigNode& hw, ir::DType dt);
double config_hbm_bytes_per_s(const ConfigNode& hw);

}  // namespace gtsim::analytic
