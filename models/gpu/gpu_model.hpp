// The GPU model's entry point: a machine built from a config, running kernels one after another
// (L2 contents carry over between kernels; L1s are invalidated at kernel boundaries).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "kernels_ir/exec/program.hpp"
#include "models/gpu/sampler.hpp"
#include "models/gpu/timeline.hpp"
#include "sim/config.hpp"

namespace gtsim::ir {
struct Kernel;
}

namespace gtsim::gpu {

// Everything `gtsim run --json` reports for one kernel. Every figure is produced by the model.
struct KernelResult {
  std::string kernel;
  std::string hw;
  uint64_t cycles = 0;            // execution span on the SM clock: first CTA dispatch to last CTA end
  double sm_mhz = 0;              // the SM clock the kernel ran at (clocks.sm_mhz, or sm_mhz_tensor)
  double launch_overhead_us = 0;  // from the config's launch section
  double time_us = 0;             // launch overhead + cycles / SM clock
  double stream_gap_us = 0;       // added per launch back to back into a stream (not in time_us)
  uint64_t ctas = 0;
  uint32_t ctas_per_sm = 0;       // occupancy limit from registers, shared memory, threads, CTA slots
  std::string occupancy_limiter;  // which of those binds
  double waves = 0;               // ctas / (ctas_per_sm * SMs), as launch__waves_per_multiprocessor
  // The words of `gtsim waves` (docs/units.md): whole waves, a partial last one counted, and how full
  // the last one is (2.67 above is 3 waves, the last 67% full). The JSON's "waves" is the whole count.
  int64_t whole_waves() const;
  double last_wave_fill() const;
  uint64_t warp_instructions = 0;
  uint64_t thread_instructions = 0;
  uint64_t dram_read_bytes = 0;
  uint64_t dram_write_bytes = 0;
  // dirty sectors in the L2 when the kernel ends: DRAM writes still owed, which dram_write_bytes does
  // not count (a later launch or the end of the program writes them back; a TPU writes every byte)
  uint64_t l2_dirty_bytes_at_end = 0;
  double l2_hit_rate = 0;  // sector hit rate, 0..1
  uint64_t flops = 0;
  uint64_t events = 0;
  double sim_wall_seconds = 0;
  SamplingReport sampling;                            // how much was simulated and the estimated error of the rest
  nlohmann::json metrics = nlohmann::json::object();  // Nsight Compute names where one exists
  nlohmann::json stats = nlohmann::json::object();    // hierarchical stats by component path
  nlohmann::json to_json() const;
};

class GpuModel {
 public:
  // Builds the machine; throws InputError (file:line:col) on bad or unknown config keys, LimitError
  // when its estimated model state is above RunLimits::max_memory_gib (before allocating it).
  explicit GpuModel(const ConfigNode& root);
  ~GpuModel();
  // Runs one kernel to completion. Throws SimulationError on deadlock (with which warps wait where),
  // LimitError before the run when its estimated memory or work is above the RunLimits
  // (models/gpu/footprint.hpp) and when a limit is reached during it.
  KernelResult run(const ir::Program& program);
  // Between kernels: the L2 holds [base, base + bytes) as a launch that touched it last would leave it
  // (dirty when `dirty`), with no time and no DRAM traffic (mem::GpuMemorySystem::preload_l2).
  void preload_l2(uint64_t base, uint64_t bytes, bool dirty);
  // Simulated time between the end of one kernel and the start of the next in a multi-kernel run.
  void idle(double us);
  // The parsed kernel a program was built from: "cannot launch" errors then point at its block,
  // regs or shared declaration (without it, the program's file is parsed again to find them).
  void add_source(std::shared_ptr<const ir::Kernel> kernel);
  // Sampled simulation (on by default; policy.exact turns it off), for the kernels run from now on.
  void set_sampling(const SamplingPolicy& policy);
  // Records a timeline of the kernels run from now on (models/gpu/timeline.hpp); timeline_json()
  // is its Chrome trace-event JSON (null when none was asked for).
  void record_timeline(const TimelineOptions& opt);
  nlohmann::json timeline_json() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtsim::gpu
