// Shared-memory bank conflicts. Shared memory is `banks` banks of `bank_bytes` each; a bank
// serves one distinct word per cycle. A warp request costs as many wavefronts as the most
// distinct words any one bank must serve: lanes reading the same word share it (broadcast), and
// a 16-byte access covers four consecutive banks. Ideal = the fewest wavefronts that could carry
// the request's distinct words, so conflicts = wavefronts - ideal (as Nsight Compute counts).
#pragma once

#include <cstdint>

#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::gpu {

struct SharedCost {
  uint32_t wavefronts = 1;
  uint32_t ideal = 1;
};

// `inst.addr[lane]` are byte offsets into the CTA's shared memory, `inst.access_bytes` per lane,
// `inst.addr_active` the lanes supplying an address. A request with no active lane still costs one wavefront.
SharedCost shared_wavefronts(const ir::DynInst& inst, uint32_t banks, uint32_t bank_bytes);

}  // namespace gtsim::gpu
