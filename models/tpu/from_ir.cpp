#include "models/tpu/from_ir.hpp"

#include "kernels_ir/tpu_dialect.hpp"
#include "sim/error.hpp"

namespace gtsim::tpu {
namespace {

ir::TpuProgram expand(const ir::Kernel& k, const ir::ParamValues& params) {
  std::vector<Diagnostic> diags;
  if (!k.tpu) throw InputError(SourcePos{k.file, k.loc.line, k.loc.col}, "kernel '" + k.name + "' is a GPU kernel, expected a tpu_kernel");
  auto p = ir::expand_tpu(k, params, diags);
  if (!diags.empty()) throw InputError(diags);
  return p;
}

CoreProgram convert(const ir::TpuProgram& t, const TpuConfig& cfg) {
  CoreProgram p;
  p.name = t.name;
  for (const auto& b : t.vmem) p.add_buffer(b.name, uint32_t(b.rows), uint32_t(b.cols), b.elt_bytes, b.slots);
  p.semaphores = uint16_t(t.tags);
  for (const auto& o : t.ops) {
    uint32_t r = uint32_t(o.rows), c = uint32_t(o.cols);
    switch (o.kind) {
      case ir::TpuOpKind::kDmaLoad: p.push(Step::dma_in(o.buffer, uint16_t(o.unit), r, c)); break;
      case ir::TpuOpKind::kDmaStore: p.push(Step::dma_out(o.buffer, uint16_t(o.unit), r, c)); break;
      case ir::TpuOpKind::kDmaWait: p.push(Step::wait(uint16_t(o.unit))); break;
      case ir::TpuOpKind::kLoadWeights: p.push(Step::load_weights(uint16_t(o.unit), o.buffer, r, c)); break;
      case ir::TpuOpKind::kMatmul: p.push(Step::matmul(uint16_t(o.unit), o.buffer, r, uint16_t(o.passes))); break;
      case ir::TpuOpKind::kVector: p.push(Step::vector(o.buffer, r, c, o.alu, o.trans, o.reduce)); break;
      case ir::TpuOpKind::kSync: p.push(Step::sync()); break;
      case ir::TpuOpKind::kLoop: p.push(Step::loop(uint32_t(o.count))); break;
      case ir::TpuOpKind::kEndLoop: p.push(Step::end_loop()); break;
    }
  }
  verify(p, cfg);
  return p;
}

}  // namespace

CoreProgram core_program_from_ir(const ir::Kernel& k, const ir::ParamValues& params, const TpuConfig& cfg) {
  return convert(expand(k, params), cfg);
}

ChipProgram chip_program_from_ir(const ir::Kernel& k, const ir::ParamValues& params, const TpuConfig& cfg) {
  auto t = expand(k, params);
  ChipProgram c;
  c.name = k.name;
  c.cores.push_back(convert(t, cfg));
  // FLOPs: a matmul streams M rows through the K x N weights last loaded into its MXU.
  std::vector<uint64_t> mult{1};
  std::vector<std::pair<uint64_t, uint64_t>> weights;
  for (const auto& o : t.ops) {
    if (o.kind == ir::TpuOpKind::kLoop) mult.push_back(mult.back() * o.count);
    if (o.kind == ir::TpuOpKind::kEndLoop && mult.size() > 1) mult.pop_back();
    if (o.kind == ir::TpuOpKind::kLoadWeights) {
      if (weights.size() <= o.unit) weights.resize(o.unit + 1);
      weights[o.unit] = {o.rows, o.cols};
    }
    if (o.kind == ir::TpuOpKind::kMatmul && o.unit < weights.size()) {
      c.useful_flops += mult.back() * 2 * o.rows * weights[o.unit].first * weights[o.unit].second;
      c.uses_mxu = true;
    }
  }
  for (const auto& h : t.hbm) c.min_hbm_bytes += h.elements * h.elt_bytes;
  c.hbm_footprint_bytes = c.min_hbm_bytes;
  return c;
}

}  // namespace gtsim::tpu
