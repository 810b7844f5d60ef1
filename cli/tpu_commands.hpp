// `gtsim run` and `gtsim workload` on a TPU config (`target: tpu`): a TPU-dialect kernel
// (kernels_ir/lib/tpu_*.kir, kernels_ir/tpu_dialect.hpp) or a workload, on the TPU model
// (models/tpu). The report has the GPU run's shape and, where a figure means the same, its JSON keys
// (time_us, cycles, flops, dram_read_bytes, dram_write_bytes, events, sim_wall_seconds).
#pragma once

#include <string>
#include <vector>

#include "sim/config.hpp"

namespace gtsim::cli {

struct TraceRequest;  // cli/trace_output.hpp

// True for a config whose `target:` is tpu.
bool is_tpu_config(const ConfigNode& hw);

struct TpuRunRequest {
  std::string hw_path, kernel, json, tiling;
  std::vector<std::string> params, sets;
  bool stats = false;
  const TraceRequest* trace = nullptr;  // --trace (checked before the run): the timeline
};
int run_tpu_kernel(const ConfigNode& hw, const TpuRunRequest& req);

struct TpuWorkloadRequest {
  std::string hw_path, workload, json, tiling;
  std::vector<std::string> params, sets;
  bool fusion = true, recompute = true;
  const TraceRequest* trace = nullptr;  // --trace (checked before the run): the timeline, one slice per op
};
int run_tpu_workload_command(const ConfigNode& hw, const TpuWorkloadRequest& req);

// "BMxBKxBN" (each a positive integer, or 0 = chosen by the lowering) -> the matmul tiling; InputError
// naming the option otherwise.
struct TilingTriple {
  uint64_t bm = 0, bk = 0, bn = 0;
};
TilingTriple parse_tiling(const std::string& text);

}  // namespace gtsim::cli
