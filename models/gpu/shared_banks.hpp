// Shared-memory bank conflicts: the rules live with the IR's dynamic instructions
// (kernels_ir/exec/shared_banks.hpp), so that the trace tool and the SM model count alike.
#pragma once

#include "kernels_ir/exec/shared_banks.hpp"

namespace gtsim::gpu {

using ir::SharedCost;

inline SharedCost shared_wavefronts(const ir::DynInst& inst, uint32_t banks, uint32_t bank_bytes) {
  return ir::shared_cost(inst, banks, bank_bytes);
}

}  // namespace gtsim::gpu
