// `gtsim compare` and `gtsim run` for TPU configs: a workload (kernels_ir/graph) on one TPU chip,
// and the same workload on several machines side by side (GPU configs through the workload
// engineer's GPU runner, models/analytic/workload_run.hpp; TPU configs through this model).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/graph/workload.hpp"
#include "models/tpu/lowering.hpp"
#include "models/tpu/tpu_model.hpp"
#include "sim/config.hpp"

namespace gtsim::tpu {

// One workload op on a TPU: the sum of the calls it lowered to.
struct TpuOpRecord {
  std::string op, kind;
  int programs = 0;    // chip programs (naive attention: 3)
  double time_us = 0;  // device time (dispatch is charged once per workload)
  uint64_t flops = 0;
  uint64_t hbm_bytes = 0;  // read + write, padded to tiles and bursts
  uint64_t min_bytes = 0;
  double mxu_utilization = 0;  // useful MACs / MXU capacity over time_us (0 for vector ops)
  double mxu_array_fill = 0;   // spatial fill of the array (padding waste = 1 - fill)
  uint64_t mxu_cycles = 0;     // the busiest MXU's busy cycles, summed over the op's calls
  double intensity = 0;        // flops / hbm_bytes
  std::string bound;
  std::string note;
};

struct TpuWorkloadReport {
  std::string hw;
  std::vector<TpuOpRecord> ops;
  double dispatch_us = 0;  // once per workload: it runs as one compiled program
  double total_us = 0;     // dispatch + sum of op device times
  uint64_t hbm_bytes = 0;
  double ridge_flops_per_byte = 0;
  nlohmann::json json;
  std::string text;
};

struct TpuRunOptions {
  bool fusion = true;  // the workload graph's elementwise fusion pass (XLA fuses too)
  bool recompute = true;
  LowerOptions lower;
};

// Maps a workload op onto the TPU lowering's description.
OpDesc op_desc(const wl::Op& op);
// Refuses (InputError with the sizes) a workload whose tensors do not fit the chip's HBM.
void check_workload_fits(const wl::Workload& w, const TpuConfig& cfg);
// `gtsim run`-like use of a TPU config on a workload.
TpuWorkloadReport run_tpu_workload(const TpuConfig& cfg, const wl::Workload& w, const TpuRunOptions& opt = {});

struct CompareOptions {
  TpuRunOptions tpu;
  bool gpu_exact = false;  // GPU runner without sampling
};

struct CompareResult {
  nlohmann::json json;  // {"workload", "machines": [...], "ops": [...], "total": {...}}
  std::string text;     // the table
};

// Each root is a whole hw config (target: gpu or tpu). Per op and in total for each machine:
// time, matrix-unit utilization, HBM bytes, arithmetic intensity, bound; the winner and why.
CompareResult compare(const wl::Workload& w, const std::vector<std::shared_ptr<ConfigNode>>& hw_roots,
                      const CompareOptions& opt = {});

}  // namespace gtsim::tpu
