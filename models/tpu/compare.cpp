#include "models/tpu/compare.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "kernels_ir/graph/passes.hpp"
#include "models/analytic/workload_run.hpp"
#include "sim/error.hpp"

namespace gtsim::tpu {

OpDesc op_desc(const wl::Op& op) {
  OpDesc d;
  d.name = op.name;
  d.elt_bytes = uint32_t(op.inputs.empty() ? op.dtype_bytes() : ir::dtype_bytes(op.inputs[0].dtype));
  if (!op.outputs.empty() && (op.kind == wl::OpKind::kElementwise || op.kind == wl::OpKind::kSoftmax))
    d.out_bytes = uint32_t(ir::dtype_bytes(op.outputs[0].dtype));
  switch (op.kind) {
    case wl::OpKind::kMatmul:
      d.kind = OpKind::kMatmul;
      d.batch = uint64_t(op.mm.batch), d.m = uint64_t(op.mm.M), d.k = uint64_t(op.mm.K), d.n = uint64_t(op.mm.N);
      d.f32_matmul = op.dtype == ir::DType::kF32;
      break;
    case wl::OpKind::kElementwise: {
      d.kind = OpKind::kElementwise;
      // A 2-D or higher tensor keeps its last dimension as the lanes; a flat vector is laid out as
      // XLA does, in rows of 128 lanes (not one row padded to 8 sublanes: 8x the bytes).
      bool flat = op.outputs.empty() || op.outputs[0].shape.size() <= 1;
      uint64_t cols =
          flat ? std::min<uint64_t>(128, std::max<uint64_t>(1, op.elements())) : uint64_t(op.outputs[0].shape.back());
      d.cols = std::max<uint64_t>(1, cols), d.rows = std::max<uint64_t>(1, (op.elements() + d.cols - 1) / d.cols);
      d.inputs = uint32_t(std::max<size_t>(1, op.inputs.size()));
      float alu = 0, sfu = 0;
      for (const auto& e : op.exprs) alu += float(e.alu_ops()), sfu += float(e.sfu_ops());
      d.alu_ops = std::max(alu, 1.0f), d.transcendentals = sfu;
      break;
    }
    case wl::OpKind::kSoftmax:
    case wl::OpKind::kReduction:
      d.kind = op.kind == wl::OpKind::kSoftmax ? OpKind::kSoftmax : OpKind::kReduction;
      d.rows = uint64_t(op.rows), d.cols = uint64_t(op.cols);
      break;
    case wl::OpKind::kAttention:
      d.kind = OpKind::kAttention;
      d.batch_heads = uint64_t(op.attn.B * op.attn.H), d.seq = uint64_t(op.attn.T), d.head_dim = uint64_t(op.attn.d);
      d.flash = op.attn.impl == wl::AttnImpl::kFlash;
      break;
  }
  return d;
}

void check_workload_fits(const wl::Workload& w, const TpuConfig& cfg) {
  uint64_t total = 0;
  std::string biggest;
  uint64_t big = 0;
  for (const auto& t : w.tensors()) {
    total += t.bytes();
    if (t.bytes() > big) big = t.bytes(), biggest = t.name;
  }
  if (total <= cfg.hbm_bytes()) return;
  std::ostringstream os;
  const double gib = 1024.0 * 1024.0 * 1024.0;  // capacities in binary units (docs/tpu.md, "Units")
  os.precision(4);
  os << "workload " << w.name() << " needs " << total << " bytes (" << double(total) / gib
     << " GiB) of tensors, the largest " << biggest << " with " << big << " bytes, but " << cfg.name << " has "
     << cfg.hbm_bytes() << " bytes of HBM (" << double(cfg.hbm_bytes()) / gib
     << " GiB, hbm.capacity_gb: " << cfg.hbm.capacity_gb << " decimal GB)";
  throw InputError(SourcePos{cfg.source, 0, 0}, os.str());
}

namespace {

std::string kind_name(wl::OpKind k) { return std::string(wl::op_kind_name(k)); }

TpuOpRecord run_op(const TpuModel& model, const wl::Op& op, const LowerOptions& lo) {
  const TpuConfig& cfg = model.config();
  OpDesc d = op_desc(op);
  TpuOpRecord rec;
  rec.op = op.name, rec.kind = kind_name(op.kind), rec.flops = op.flops(), rec.min_bytes = op.min_bytes();
  uint64_t useful = 0, array = 0;
  double longest = -1;
  uint64_t hbm_useful = 0;
  for (const auto& prog : lower(d, cfg, lo)) {
    RunResult r = model.run(prog);
    ++rec.programs;
    rec.time_us += r.device_us;
    rec.hbm_bytes += r.hbm_read_bytes + r.hbm_write_bytes;
    hbm_useful += r.hbm_useful_bytes;
    rec.vmem_bytes += r.vmem_bytes;
    useful += r.mxu_useful_macs, array += r.mxu_array_macs;
    rec.mxu_cycles += r.mxu_cycles;
    if (r.device_us > longest) longest = r.device_us, rec.bound = r.bound;
  }
  if (op.kind == wl::OpKind::kAttention && op.attn.backward) {
    rec.time_us *= 2.5, rec.hbm_bytes = uint64_t(double(rec.hbm_bytes) * 2.5);
    hbm_useful = uint64_t(double(hbm_useful) * 2.5);
    rec.vmem_bytes = uint64_t(double(rec.vmem_bytes) * 2.5);
    rec.note = "backward approximated as 2.5x the forward";
  }
  double cap = double(cfg.tensorcores) * cfg.mxu.count * cfg.mxu.rows * cfg.mxu.cols * cfg.mxu.rows_per_cycle *
               cfg.core_mhz * 1e6;
  rec.mxu_utilization = rec.time_us > 0 ? double(useful) / (cap * rec.time_us * 1e-6) : 0.0;
  rec.mxu_array_fill = array ? double(useful) / double(array) : 0.0;
  rec.hbm_useful_bytes = hbm_useful, rec.mxu_useful_macs = useful, rec.mxu_array_macs = array;
  rec.intensity = rec.hbm_bytes ? double(rec.flops) / double(rec.hbm_bytes) : 0.0;
  return rec;
}

}  // namespace

TpuWorkloadReport run_tpu_workload(const TpuConfig& cfg, const wl::Workload& input, const TpuRunOptions& opt) {
  wl::Workload w = input;
  wl::PassOptions po;
  po.fusion = opt.fusion, po.recompute = opt.recompute;
  wl::run_passes(w, po);
  check_workload_fits(w, cfg);
  TpuModel model(cfg);
  TpuWorkloadReport rep;
  rep.hw = cfg.name;
  rep.dispatch_us = cfg.dispatch_us;
  rep.ridge_flops_per_byte = cfg.ridge_flop_per_byte();
  for (const wl::Op* op : w.ops_in_order()) rep.ops.push_back(run_op(model, *op, opt.lower));
  rep.total_us = rep.dispatch_us;
  std::ostringstream o;
  char buf[320];
  std::snprintf(buf, sizeof buf, "%-24s %-11s %10s %7s %7s %11s %9s %-14s\n", "op", "kind", "time_us", "mxu%", "fill%",
                "hbm_MB", "flop/B", "bound");
  o << cfg.name << " (dispatch " << rep.dispatch_us << " us once per workload)\n" << buf;
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& r : rep.ops) {
    rep.total_us += r.time_us, rep.hbm_bytes += r.hbm_bytes;
    std::snprintf(buf, sizeof buf, "%-24.24s %-11s %10.2f %6.1f%% %6.1f%% %11.2f %9.1f %-14s\n", r.op.c_str(),
                  r.kind.c_str(), r.time_us, 100 * r.mxu_utilization, 100 * r.mxu_array_fill, double(r.hbm_bytes) / 1e6,
                  r.intensity, r.bound.c_str());
    o << buf;
    ops.push_back({{"op", r.op},
                   {"kind", r.kind},
                   {"programs", r.programs},
                   {"time_us", r.time_us},
                   {"flops", r.flops},
                   {"hbm_bytes", r.hbm_bytes},
                   {"hbm_useful_bytes", r.hbm_useful_bytes},
                   {"vmem_bytes", r.vmem_bytes},
                   {"min_bytes", r.min_bytes},
                   {"mxu_useful_macs", r.mxu_useful_macs},
                   {"mxu_array_macs", r.mxu_array_macs},
                   {"mxu_utilization", r.mxu_utilization},
                   {"mxu_array_fill", r.mxu_array_fill},
                   {"mxu_cycles", r.mxu_cycles},
                   {"intensity", r.intensity},
                   {"bound", r.bound},
                   {"note", r.note}});
  }
  std::snprintf(buf, sizeof buf, "%-36s %10.2f %27.2f\n", "total (with dispatch)", rep.total_us,
                double(rep.hbm_bytes) / 1e6);
  o << buf;
  rep.text = o.str();
  rep.json = {{"hw", rep.hw},
              {"target", "tpu"},
              {"dispatch_us", rep.dispatch_us},
              {"total_us", rep.total_us},
              {"hbm_bytes", rep.hbm_bytes},
              {"ridge_flops_per_byte", rep.ridge_flops_per_byte},
              {"ops", ops}};
  return rep;
}

}  // namespace gtsim::tpu
