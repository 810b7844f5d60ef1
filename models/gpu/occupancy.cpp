#include "models/gpu/occupancy.hpp"

#include <algorithm>
#include <exception>
#include <limits>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/program_impl.hpp"
#include "kernels_ir/parser.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {
namespace {

uint32_t round_up(uint32_t v, uint32_t unit) { return (v + unit - 1) / unit * unit; }

enum class Decl { kBlock, kRegs, kShared };

[[noreturn]] void does_not_fit(const std::string& kernel, const OccupancySourceFn& where, Decl d,
                               const std::string& why) {
  if (where) {
    OccupancySource s = where();
    const SourcePos& p = d == Decl::kBlock ? s.block : d == Decl::kRegs ? s.regs : s.shared;
    if (!p.file.empty()) throw InputError(p, "kernel " + kernel + ": cannot launch: " + why);
  }
  throw InputError(SourcePos{"kernel " + kernel}, "cannot launch: " + why);
}

SourcePos at(const std::string& file, const ir::Loc& l) { return SourcePos{file, l.line, l.col}; }

}  // namespace

OccupancySource occupancy_source(const ir::Kernel& k) {
  OccupancySource s;
  s.grid = k.grid.empty() ? at(k.file, k.loc) : at(k.file, k.grid.front().loc);
  s.block = k.block.empty() ? at(k.file, k.loc) : at(k.file, k.block.front().loc);
  s.regs = k.regs ? at(k.file, k.regs->loc) : at(k.file, k.loc);
  s.shared = k.smem ? at(k.file, k.smem->loc) : k.shared.empty() ? at(k.file, k.loc) : at(k.file, k.shared.front().loc);
  return s;
}

OccupancySource occupancy_source(const ir::Program& program,
                                 const std::map<std::string, std::shared_ptr<const ir::Kernel>>& parsed) {
  const std::string& file = program.impl().file;
  if (auto it = parsed.find(file); it != parsed.end() && it->second->name == program.name())
    return occupancy_source(*it->second);
  if (!file.empty()) {
    try {
      auto k = ir::parse_kernel_file(file);
      if (k->name == program.name()) return occupancy_source(*k);
    } catch (const std::exception&) {  // changed or gone since: name the kernel only
    }
  }
  return OccupancySource{};
}

Occupancy compute_occupancy(const SmSpecs& sm, uint32_t l1_unified_kb, const KernelShape& k,
                            const std::string& kernel_name, const OccupancySourceFn& where) {
  Occupancy o;
  if (k.threads_per_cta == 0) does_not_fit(kernel_name, where, Decl::kBlock, "the CTA has no threads");
  if (k.threads_per_cta > sm.max_threads_per_cta)
    does_not_fit(kernel_name, where, Decl::kBlock,
                 std::to_string(k.threads_per_cta) + " threads per CTA, the machine allows " +
                     std::to_string(sm.max_threads_per_cta));
  if (k.regs_per_thread > sm.max_regs_per_thread)
    does_not_fit(kernel_name, where, Decl::kRegs,
                 std::to_string(k.regs_per_thread) + " registers per thread, the machine allows " +
                     std::to_string(sm.max_regs_per_thread));
  if (k.shared_bytes > sm.shared.max_per_cta_bytes)
    does_not_fit(kernel_name, where, Decl::kShared,
                 std::to_string(k.shared_bytes) + " bytes of shared memory per CTA, the machine allows " +
                     std::to_string(sm.shared.max_per_cta_bytes));
  constexpr uint32_t kNoLimit = std::numeric_limits<uint32_t>::max();
  o.warps_per_cta = (k.threads_per_cta + ir::kWarpSize - 1) / ir::kWarpSize;
  // Registers are allocated per warp in granules of reg_alloc_unit [CUDA occupancy calculator].
  o.regs_per_warp = round_up(k.regs_per_thread * ir::kWarpSize, sm.reg_alloc_unit);
  o.limit_registers = o.regs_per_warp == 0 ? kNoLimit : (sm.registers / o.regs_per_warp) / o.warps_per_cta;
  // Every CTA also holds the system reservation (1 KB on sm_80/sm_90), as the calculator counts it.
  uint64_t smem_per_cta = uint64_t(k.shared_bytes) + sm.shared.reserved_per_cta_bytes;
  uint64_t max_carveout = uint64_t(sm.shared.carveouts_kb.back()) * 1024;
  o.limit_shared_mem = smem_per_cta == 0 ? kNoLimit : uint32_t(max_carveout / smem_per_cta);
  o.limit_warps = std::min(sm.max_warps / o.warps_per_cta, sm.max_threads / (o.warps_per_cta * ir::kWarpSize));
  o.limit_blocks = sm.max_ctas;
  o.ctas_per_sm = std::min({o.limit_registers, o.limit_shared_mem, o.limit_warps, o.limit_blocks});
  if (o.ctas_per_sm == 0) {
    // The first resource that admits no CTA is the declaration to change.
    if (o.limit_registers == 0)
      does_not_fit(kernel_name, where, Decl::kRegs,
                   "not one CTA fits on an SM: " + std::to_string(o.warps_per_cta) + " warps x " +
                       std::to_string(o.regs_per_warp) + " registers need more than the SM's " +
                       std::to_string(sm.registers));
    if (o.limit_shared_mem == 0)
      does_not_fit(kernel_name, where, Decl::kShared,
                   "not one CTA fits on an SM: " + std::to_string(smem_per_cta) +
                       " bytes of shared memory (with the reservation) exceed the largest carve-out of " +
                       std::to_string(max_carveout));
    if (o.limit_warps == 0)
      does_not_fit(kernel_name, where, Decl::kBlock,
                   "not one CTA fits on an SM: " + std::to_string(o.warps_per_cta) + " warps per CTA, the SM holds " +
                       std::to_string(sm.max_warps) + " warps and " + std::to_string(sm.max_threads) + " threads");
    does_not_fit(kernel_name, where, Decl::kBlock, "not one CTA fits on an SM (CTA slots)");
  }
  if (o.ctas_per_sm == o.limit_registers) o.limiter = "registers";
  else if (o.ctas_per_sm == o.limit_shared_mem) o.limiter = "shared_mem";
  else if (o.ctas_per_sm == o.limit_warps) o.limiter = "warps";
  else o.limiter = "blocks";
  // The driver picks the smallest carve-out that holds every resident CTA's shared memory; the
  // rest of the unified array is L1 cache [Ampere/Hopper tuning guides].
  uint64_t need = uint64_t(o.ctas_per_sm) * smem_per_cta;
  o.carveout_bytes = uint32_t(max_carveout);
  for (uint32_t kb : sm.shared.carveouts_kb)
    if (uint64_t(kb) * 1024 >= need) {
      o.carveout_bytes = kb * 1024;
      break;
    }
  o.l1_bytes = l1_unified_kb * 1024 - o.carveout_bytes;
  o.theoretical_pct = 100.0 * double(o.ctas_per_sm * o.warps_per_cta) / double(sm.max_warps);
  return o;
}

}  // namespace gtsim::gpu
