// The TPU chip model: TensorCores that issue core programs on the discrete-event engine.
// Each TensorCore has a scalar issue unit, DMA engines (HBM <-> VMEM, asynchronous, signalling
// semaphores), MXUs (systolic arrays, weight-, output- or input-stationary: docs/tpu_dataflows.md;
// textbook or tpu_like timing), a vector unit working on (8,128) vregs and VMEM bandwidth as a
// server; the chip's HBM is a bandwidth server shared by its TensorCores. Events: DMA completions,
// MXU fold completions, vector op completions, scalar resumption after a wait or sync.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "models/tpu/core_program.hpp"
#include "models/tpu/tpu_config.hpp"

namespace gtsim::tpu {

class TpuTimeline;  // models/tpu/tpu_timeline.hpp

struct RunResult {
  std::string name;
  std::string hw;
  double dispatch_us = 0;  // per-call overhead from the config
  double device_us = 0;    // first issue to last completion
  double time_us = 0;      // dispatch + device
  uint64_t cycles = 0;     // device time in core cycles
  uint64_t useful_flops = 0;
  uint64_t min_hbm_bytes = 0;
  uint64_t hbm_read_bytes = 0;  // moved, padded to (8,128) tiles and bursts
  uint64_t hbm_write_bytes = 0;
  uint64_t hbm_useful_bytes = 0;  // the same transfers without tile padding
  uint64_t vmem_bytes = 0;        // VMEM traffic: DMAs, vector loads and stores, MXU operands and results
  uint64_t mxu_useful_macs = 0;
  uint64_t mxu_array_macs = 0;   // rows streamed x array size (padding included)
  uint64_t mxu_busy_cycles = 0;  // summed over MXUs (union of each MXU's busy intervals)
  uint64_t mxu_cycles = 0;       // the busiest MXU's busy cycles: the compute cycles SCALE-Sim reports
  uint64_t vpu_busy_cycles = 0;
  uint64_t vpu_vregs = 0;
  uint64_t vpu_elements = 0;   // useful elements; vregs x 1024 - this = padding
  double mxu_utilization = 0;  // useful MACs / (all MXUs' capacity over the device time)
  double mxu_array_fill = 0;   // useful MACs / array MACs: spatial padding waste
  double hbm_busy_frac = 0;    // HBM server busy time / device time
  double mxu_busy_frac = 0;    // busiest MXU's busy time / device time
  double vpu_busy_frac = 0;
  double achieved_tflops = 0;       // useful FLOPs / time_us (dispatch included)
  double pct_of_peak = 0;           // achieved / stated peak, percent
  double arithmetic_intensity = 0;  // useful FLOPs / HBM bytes moved
  std::string bound;                // "compute (MXU)", "memory (HBM)", "vector unit", "latency"
  uint64_t events = 0;
  double sim_wall_seconds = 0;
  nlohmann::json stats = nlohmann::json::object();
  nlohmann::json to_json() const;
};

class TpuModel {
 public:
  explicit TpuModel(TpuConfig cfg) : cfg_(std::move(cfg)) {}
  const TpuConfig& config() const { return cfg_; }
  // Verifies each core program, then simulates the call to completion.
  RunResult run(const ChipProgram& program) const;
  // Records each run on `t` (null: the thread's active one, TimelineScope; none: no cost).
  void record_timeline(TpuTimeline* t) { timeline_ = t; }

 private:
  TpuConfig cfg_;
  TpuTimeline* timeline_ = nullptr;
};

}  // namespace gtsim::tpu
