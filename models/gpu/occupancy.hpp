// Occupancy: how many CTAs of a kernel fit on one SM at once, and which resource binds, as the
// CUDA occupancy calculator computes it; and the shared-memory carve-out the driver picks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "models/gpu/specs.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {
struct Kernel;
class Program;
}  // namespace gtsim::ir

namespace gtsim::gpu {

struct KernelShape {
  uint32_t threads_per_cta = 0;
  uint32_t regs_per_thread = 0;
  uint32_t shared_bytes = 0;  // static + dynamic shared memory per CTA
};

struct Occupancy {
  uint32_t ctas_per_sm = 0;
  // CTAs per SM allowed by each resource alone (as launch__occupancy_limit_*).
  uint32_t limit_registers = 0;
  uint32_t limit_shared_mem = 0;
  uint32_t limit_warps = 0;   // warp slots and thread slots
  uint32_t limit_blocks = 0;  // CTA slots
  std::string limiter;        // "registers", "shared_mem", "warps" or "blocks" (first binding, in that order)
  uint32_t warps_per_cta = 0;
  uint32_t regs_per_warp = 0;       // after rounding to the allocation granule
  uint32_t carveout_bytes = 0;      // shared memory per SM chosen by the driver
  uint32_t l1_bytes = 0;            // unified_kb minus the carve-out: what the L1 cache gets
  double theoretical_pct = 0;       // ctas_per_sm * warps_per_cta / max_warps * 100
};

// Where a kernel declares what occupancy depends on: its `block` (threads), `regs` and shared memory
// (`smem`, else its first `shared` array), and its `grid`; each file:line:col (the kernel's header
// when undeclared).
struct OccupancySource {
  SourcePos grid, block, regs, shared;
};
OccupancySource occupancy_source(const ir::Kernel& k);
// For a program: from its parsed kernel in `parsed` (keyed by file) when there, else by parsing the
// program's file again; the kernel's name alone when neither works.
OccupancySource occupancy_source(const ir::Program& program,
                                 const std::map<std::string, std::shared_ptr<const ir::Kernel>>& parsed);
// Called only when a diagnostic needs it (parsing a file again costs more than the occupancy).
using OccupancySourceFn = std::function<OccupancySource()>;

// Throws InputError when the CTA cannot fit at all: too many threads, registers per thread above
// the limit, more shared memory than one CTA may have, or not one CTA per SM; at the declaration
// responsible when `where` is given (else naming the kernel).
Occupancy compute_occupancy(const SmSpecs& sm, uint32_t l1_unified_kb, const KernelShape& k,
                            const std::string& kernel_name, const OccupancySourceFn& where = {});

}  // namespace gtsim::gpu
