// The TPU dialect of the kernel IR (kernels_ir/tpu_dialect.hpp) -> a core program: a parsed
// `tpu_kernel` plus parameter values becomes one TensorCore's CoreProgram (loops whose trips are
// identical stay `loop N`, the others are unrolled), checked by the dialect's verifier and then by
// tpu::verify against the machine. Errors: InputError with file:line:col (dialect) or
// "core program NAME:STEP" (machine).
#pragma once

#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/program.hpp"
#include "models/tpu/core_program.hpp"
#include "models/tpu/tpu_config.hpp"

namespace gtsim::tpu {

CoreProgram core_program_from_ir(const ir::Kernel& k, const ir::ParamValues& params, const TpuConfig& cfg);

// The kernel as a one-core chip call: useful FLOPs from the matmuls (2 x M x K x N each, loops
// counted), min HBM bytes and footprint = the declared HBM buffers.
ChipProgram chip_program_from_ir(const ir::Kernel& k, const ir::ParamValues& params, const TpuConfig& cfg);

}  // namespace gtsim::tpu
