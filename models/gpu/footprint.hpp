// Up-front estimates that refuse a run before it starts instead of letting it grow without bound:
// the host memory the model's state takes (tag arrays of every L1 and L2 slice, per-SM and per-warp
// state of the resident CTAs, the chains of `init chase` buffers) and the work of a launch (its
// dynamic warp instructions). Both are checked against the process's RunLimits
// (sim/simulation.hpp; --max-memory-gib, --max-warp-instructions) and refused with a LimitError
// that gives the estimate, its parts and the flag that raises the limit.
#pragma once

#include <cstdint>
#include <string>

#include "kernels_ir/exec/program.hpp"
#include "models/gpu/specs.hpp"
#include "sim/config.hpp"

namespace gtsim::gpu {

struct MemoryEstimate {
  double bytes = 0;
  std::string parts;  // "L1 tags 2.6 GiB (108 SMs x 524288 lines), ..."
};

// The model state of the machine a config describes, before any kernel (GpuModel's constructor).
MemoryEstimate machine_memory(const ConfigNode& root, const GpuSpecs& specs);
// What one launch adds: executor state of the CTAs resident at once, and `init chase` chains.
MemoryEstimate launch_memory(const ir::Program& program, const GpuSpecs& specs, uint32_t ctas_per_sm);

struct WorkEstimate {
  double warp_instructions = 0;  // over the whole launch, as --exact would simulate it
  double ctas = 0;               // the grid's CTAs, counted without overflow
  double per_warp = 0;           // mean over the sampled warps
  uint32_t warps_per_cta = 0;
  bool extrapolated = false;  // a sampled warp ran past the budget: its count is extrapolated
};
// Runs a few warps (first, middle and last CTA) through the executor, each for at most
// `budget_per_warp` instructions, and extrapolates from the loops' progress when one runs past it.
WorkEstimate estimate_work(const ir::Program& program, uint64_t budget_per_warp = 1u << 20);

// Throw LimitError when the estimate is above the limit (`what` names what is estimated).
void check_memory_limit(const MemoryEstimate& e, const std::string& what);
void check_work_limit(const WorkEstimate& e, const std::string& kernel);

// "2.6 GiB", "15 MiB", "512 B".
std::string bytes_text(double bytes);

}  // namespace gtsim::gpu
