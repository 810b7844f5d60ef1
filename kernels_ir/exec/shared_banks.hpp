// Shared-memory bank conflicts. Shared memory is `banks` banks of `bank_bytes` each; a bank serves one
// distinct word per cycle, and one wavefront returns at most banks x bank_bytes (128) bytes of lane
// data (one 32-bit register for 32 lanes). A request is served in phases of lanes whose data fits one
// wavefront: all 32 lanes for accesses of up to 4 bytes, half-warps for 8-byte and quarter-warps for
// 16-byte ld.shared / st.shared; a load whose lane pairs (lanes l and l ^ 1, or l and l ^ 2) read the
// same address returns packed, in phases twice as wide. Within a phase a request costs as many
// wavefronts as the most distinct words any one bank must serve (lanes reading one word share it, a
// 16-byte access covers four consecutive banks). ldmatrix / stmatrix: one phase per request (a row
// address per lane; .x4 = 4 x 128 bytes).
// Ideal = per phase, the fewest wavefronts that could carry its distinct words; conflicts =
// wavefronts - ideal, as Nsight Compute counts them. Evidence: batch b3's Nsight record of the
// gemm_fp32 twin (validation/data/h200/b3/ncu_apps.csv): 173.6 wavefronts and 69.4 conflicts per
// warp and k-tile, where these rules give 172 and 68, and a whole-warp count gives 92 and 0.
#pragma once

#include <cstdint>

#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::ir {

struct SharedCost {
  uint32_t wavefronts = 1;
  uint32_t ideal = 1;
};

// `addr` (default: inst.addr) are byte offsets into the CTA's shared memory, `inst.access_bytes` per
// lane, `inst.addr_active` the lanes supplying an address (a cp.async: `inst.active`, every lane
// writes its shared destination, zero-filled ones included). A request with no active lane costs one
// wavefront.
SharedCost shared_cost(const DynInst& inst, uint32_t banks, uint32_t bank_bytes, const uint64_t* addr = nullptr);

// Lanes per phase of a request (32, 16 or 8; see above).
uint32_t shared_phase_lanes(const DynInst& inst, uint32_t banks, uint32_t bank_bytes, const uint64_t* addr);

}  // namespace gtsim::ir
