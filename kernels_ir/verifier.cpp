#include "kernels_ir/verifier.hpp"

#include "kernels_ir/exec/program_impl.hpp"
#include "kernels_ir/tpu_dialect.hpp"

namespace gtsim::ir {

std::vector<Diagnostic> verify(const Kernel& k, const VerifyLimits* limits) { return verify(k, ParamValues{}, limits); }

std::vector<Diagnostic> verify(const Kernel& k, const ParamValues& params, const VerifyLimits* limits) {
  if (k.tpu) return verify_tpu(k, params);
  std::vector<Diagnostic> diags = tpu_instructions_in_gpu_kernel(k);
  if (!diags.empty()) return diags;
  auto p = compile_program(k, params, diags);
  if (!diags.empty() || !limits) return diags;
  auto at = [&](const std::optional<Expr>& e, const std::vector<Expr>* v) {
    Loc l = e ? e->loc : (v && !v->empty() ? (*v)[0].loc : k.loc);
    return SourcePos{k.file, l.line, l.col};
  };
  uint64_t threads = p->block.count();
  if (threads > limits->max_threads_per_cta)
    diags.push_back({at(std::nullopt, &k.block),
                     "block of " + (threads == UINT64_MAX ? std::string("more than 2^64") : std::to_string(threads)) +
                         " threads exceeds the machine's " + std::to_string(limits->max_threads_per_cta) +
                         " threads per CTA (sm.max_threads_per_cta)"});
  if (p->shared_bytes > limits->max_shared_per_cta)
    diags.push_back({at(k.smem, nullptr), "smem " + std::to_string(p->shared_bytes) + " bytes exceeds the machine's " +
                                              std::to_string(limits->max_shared_per_cta) +
                                              " bytes per CTA (sm.shared.max_per_cta_bytes)"});
  if (p->regs > limits->max_regs_per_thread)
    diags.push_back({at(k.regs, nullptr), "regs " + std::to_string(p->regs) + " per thread exceeds the machine's " +
                                              std::to_string(limits->max_regs_per_thread) +
                                              " registers per thread (sm.max_regs_per_thread)"});
  return diags;
}

}  // namespace gtsim::ir
