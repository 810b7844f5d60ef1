// `gtsim roofline` (P2): the machine's attained roofline, measured on the model itself with its own
// microbenchmarks (kernels_ir/lib/stream_copy.kir for DRAM bandwidth, kernels_ir/lib/mma_throughput.kir
// per tensor-core dtype, a generated FFMA kernel for fp32 on the CUDA cores), the ridge point per
// dtype (attained peak FLOP/s / attained bytes/s) beside the datasheet one, and, given a workload,
// each kernel's place: intensity (FLOPs per DRAM byte, from the simulated run) against the ridge of
// its dtype, and the fraction of the roof it attains.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/graph/workload.hpp"
#include "models/analytic/workload_run.hpp"
#include "sim/config.hpp"

namespace gtsim::analytic {

struct RooflineOptions {
  int64_t stream_elements = int64_t(1) << 24;  // stream_copy n (2 x 64 MiB fp32: above the L2)
  int64_t mma_iterations = 64;                 // mma_throughput iters per warp
  int64_t ffma_iterations = 256;               // generated fp32 FFMA kernel iterations per thread
  WorkloadRunOptions run;                      // for the workload's kernels
  unsigned threads = 0;                        // microbenchmarks at once (0: the host's cores)
};

struct RidgePoint {
  std::string dtype;
  double peak_flops_config = 0;    // datasheet/config (mma_sync_flops_per_cycle x SMs x clock)
  double peak_flops_attained = 0;  // simulated microbenchmark
  double ridge_config = 0;         // FLOP per byte
  double ridge_attained = 0;
};

struct KernelPlace {
  std::string op, kernel, dtype;
  double intensity = 0;       // FLOPs per DRAM byte (simulated bytes)
  double attained_flops = 0;  // FLOPs / time
  double roof_flops = 0;      // min(peak, intensity x bandwidth), attained roofline
  double fraction_of_roof = 0;
  std::string bound;  // memory | compute (intensity against the attained ridge of its dtype)
};

struct RooflineReport {
  double bandwidth_config = 0, bandwidth_attained = 0;  // bytes/s
  std::vector<RidgePoint> ridges;
  std::vector<KernelPlace> kernels;
  nlohmann::json json;
  std::string text;
};

// `workload` may be null (machine roofline only).
RooflineReport roofline(const ConfigNode& hw, const wl::Workload* workload, const RooflineOptions& opt = {});

// The microbenchmarks alone (used by roofline(); exposed for tests).
double attained_dram_bandwidth(const ConfigNode& hw, int64_t stream_elements);
double attained_peak_flops(const ConfigNode& hw, ir::DType dt, int64_t iterations);

}  // namespace gtsim::analytic
