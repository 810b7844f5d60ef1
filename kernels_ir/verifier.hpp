// Static checks of a kernel: names, types, barrier under divergence, machine limits.
#pragma once

#include <vector>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/program.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {

struct VerifyLimits {
  uint32_t max_threads_per_cta = 1024;
  uint32_t max_shared_per_cta = 232448;
  uint32_t max_regs_per_thread = 255;
};

// Binds the default parameters (and `params` over them, in the second form) and reports every
// problem found; empty when the kernel is fine.
std::vector<Diagnostic> verify(const Kernel& k, const VerifyLimits* limits = nullptr);
std::vector<Diagnostic> verify(const Kernel& k, const ParamValues& params, const VerifyLimits* limits = nullptr);

}  // namespace gtsim::ir
