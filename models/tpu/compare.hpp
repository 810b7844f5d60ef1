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
  uint64_t hbm_bytes = 0;         // read + write, padded to tiles and bursts
  uint64_t hbm_useful_bytes = 0;  // the same transfers without the (8,128) tile padding
  uint64_t vmem_bytes = 0;        // VMEM traffic of the op's calls (RunResult::vmem_bytes)
  uint64_t min_bytes = 0;
  uint64_t mxu_useful_macs = 0;  // MACs the op needs
  uint64_t mxu_array_macs = 0;   // MAC slots of the arrays while streaming (padding included)
  double mxu_utilization = 0;    // useful MACs / MXU capacity over time_us (0 for vector ops)
  double mxu_array_fill = 0;     // spatial fill of the array (padding waste = 1 - fill)
  uint64_t mxu_cycles = 0;       // the busiest MXU's busy cycles, summed over the op's calls
  double intensity = 0;          // flops / hbm_bytes
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
  TpuRunOptions tpu;       // tpu.lower.tiling: `--tiling` (applies to the TPU machines only)
  bool gpu_exact = false;  // GPU runner without sampling
};

// What "near a ceiling" means for the attained bound of an op: at least this fraction of the
// machine's peak FLOP/s for the op's dtype and unit, or of its HBM/DRAM bandwidth.
inline constexpr double kNearCeiling = 0.5;
// The bound named from what an op attained over its device time: "compute" or "memory" when that
// ceiling is near (the nearer one when both are), "overhead" when neither is and the launch or
// dispatch charged to the op is longer than its device time, else "latency". An op that moved no
// HBM/DRAM bytes is never "memory".
std::string attained_bound(double flops_frac, double bytes_frac, uint64_t hbm_bytes, double device_us,
                           double overhead_us);

struct CompareResult {
  nlohmann::json json;  // {"workload", "machines": [...], "ops": [...], "total": {...}}
  std::string text;     // the table
};

// Each root is a whole hw config (target: gpu or tpu). Per op and in total for each machine: time
// split into device time and launch/dispatch, attained FLOP/s and bytes/s against the machine's own
// ceilings (peak of the op's dtype and unit, HBM/DRAM bandwidth), the bound named from them, MXU fill
// and padding waste (TPU), HBM bytes; the winner and why, with the total and the device-only ratio.
// Two machines with the same `name` get " (2)", " (3)"... in the JSON and the table.
CompareResult compare(const wl::Workload& w, const std::vector<std::shared_ptr<ConfigNode>>& hw_roots,
                      const CompareOptions& opt = {});

}  // namespace gtsim::tpu
