#include "kernels_ir/exec/program.hpp"

#include <numeric>

#include "kernels_ir/exec/program_impl.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Sattolo's shuffle, exactly as validation/cuda/pointer_chase.cu builds the chain:
// n = bytes / stride nodes, perm = 0..n-1, s = seed;
// for i = n-1 down to 1: j = splitmix64(s) % i; swap(perm[i], perm[j]).
// Then node perm[k] holds the byte offset of node perm[(k+1) % n]: one cycle through all n nodes.
void BufInit::build_chase() const {
  uint64_t n = bytes / stride;
  std::vector<uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  uint64_t s = seed;
  for (uint64_t i = n > 0 ? n - 1 : 0; i >= 1; --i) {
    uint64_t j = splitmix64(s) % i;
    std::swap(perm[i], perm[j]);
  }
  next.resize(n);
  for (uint64_t k = 0; k < n; ++k) next[perm[k]] = perm[(k + 1) % n];
}

int64_t BufInit::value_at(uint64_t addr) const {
  if (addr < base || addr - base >= bytes) return 0;
  uint64_t off = addr - base;
  switch (kind) {
    case InitKind::kIota:
      return int64_t(off / elem);
    case InitKind::kChase: {
      std::call_once(once, [this] { build_chase(); });
      if (off % stride) return int64_t(0xA5A5A5A5A5A5A5A5ull);  // non-node words: the twin's filler
      uint64_t j = off / stride;
      return j < next.size() ? int64_t(uint64_t(next[j]) * stride) : 0;
    }
    default:
      return 0;
  }
}

std::shared_ptr<const Program> Program::build(const Kernel& kernel, const ParamValues& params) {
  return build(kernel, params, BufferPlacement{});
}

std::shared_ptr<const Program> Program::build(const Kernel& kernel, const ParamValues& params,
                                              const BufferPlacement& placement) {
  std::vector<Diagnostic> diags;
  auto impl = compile_program(kernel, params, diags, &placement);
  if (!diags.empty()) throw InputError(std::move(diags));
  return std::make_shared<const Program>(std::move(impl));
}

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::~Program() = default;
const std::string& Program::name() const { return impl_->name; }
const ParamValues& Program::params() const { return impl_->params; }
Dim3 Program::grid() const { return impl_->grid; }
Dim3 Program::block() const { return impl_->block; }
uint32_t Program::shared_bytes() const { return impl_->shared_bytes; }
uint32_t Program::regs_per_thread() const { return impl_->regs; }
const std::vector<BufferInfo>& Program::buffers() const { return impl_->buffers; }
const StaticInstInfo& Program::instruction(uint32_t id) const { return impl_->infos.at(id); }
size_t Program::instruction_count() const { return impl_->infos.size(); }
bool Program::uses_tensor_cores() const { return impl_->tensor_cores; }

Program::SamplingLoop Program::sampling_loop() const {
  SamplingLoop s;
  if (impl_->sample_loop == kNoExpr) return s;
  const LoopCtl& lc = impl_->loop_ctl[impl_->sample_loop];
  s.exists = true;
  s.loop = impl_->sample_loop;
  s.bra = lc.bra;
  s.unroll = lc.unroll;
  // mbarrier phases flip once per use: a skip of a multiple of 2 x the stages (the waited mbarrier
  // arrays' lengths, Compiler::instr) returns every stage of the pipeline to the same stage and parity
  s.quantum = impl_->uses_mbarriers ? uint32_t(std::lcm<uint64_t>(impl_->mbar_period, lc.unroll) / lc.unroll) : 1;
  return s;
}

}  // namespace gtsim::ir
