#include "models/analytic/workload_run.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "kernels_ir/graph/lower_gpu.hpp"
#include "kernels_ir/graph/passes.hpp"
#include "kernels_ir/parser.hpp"
#include "models/analytic/gemm_plan.hpp"
#include "models/analytic/gemm_select.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/specs.hpp"
#include "sim/data_dir.hpp"

namespace gtsim::analytic {

double config_peak_flops(const ConfigNode& hw, ir::DType dt) {
  auto s = gpu::GpuSpecs::parse(hw);
  hw.mark_used_recursively();
  double per_cycle = s.sm.tensor.mma_sync_flops_per_cycle[size_t(dt)];
  double mhz = s.clocks.sm_mhz_tensor;  // tensor cores run at the clock the SM keeps under their load
  if (per_cycle == 0) {                 // CUDA-core FMA
    per_cycle = 2.0 * s.sm.units[size_t(gpu::Pipe::kFp32)].lanes * s.sm.sub_partitions;
    mhz = s.clocks.sm_mhz;
  }
  return per_cycle * s.sm.count * mhz * 1e6;
}

double config_hbm_bytes_per_s(const ConfigNode& hw) { return hw.at("hbm").at("bandwidth_gbps").as<double>() * 1e9; }

namespace {

const ir::Kernel& flash_kernel() {
  static std::once_flag once;
  static std::unique_ptr<ir::Kernel> k;
  std::call_once(once, [] { k = ir::parse_kernel_file(data_path("kernels_ir/lib/flash_attention_fwd.kir")); });
  return *k;
}

const ir::Kernel& flash_bwd_kernel() {
  static std::once_flag once;
  static std::unique_ptr<ir::Kernel> k;
  std::call_once(once, [] { k = ir::parse_kernel_file(data_path("kernels_ir/lib/flash_attention_bwd.kir")); });
  return *k;
}

struct Measured {
  std::string kernel;
  double time_us = 0, launch_us = 0;
  uint64_t rd = 0, wr = 0, dirty_end = 0;
  double l2_hit = 0;
  bool sampled = false;
  double fraction_simulated = 1.0, estimated_error_pct = 0;
};

// Runs `prog` on the workload's machine (the engine samples it unless the options say exact).
Measured run_on(gpu::GpuModel& m, const ir::Program& prog) {
  auto r = m.run(prog);
  Measured x;
  x.kernel = r.kernel;
  x.launch_us = r.launch_overhead_us;
  x.time_us = r.time_us;
  x.rd = r.dram_read_bytes;
  x.wr = r.dram_write_bytes;
  x.dirty_end = r.l2_dirty_bytes_at_end;
  x.l2_hit = r.l2_hit_rate;
  x.sampled = r.sampling.fraction_simulated < 1.0;
  x.fraction_simulated = r.sampling.fraction_simulated;
  x.estimated_error_pct = r.sampling.estimated_error_pct;
  return x;
}

// Tensor address regions: each workload tensor its own range, so kernels share data through the
// L2 for real (ir::BufferPlacement). Regions start at 2^40, 2 MiB-aligned, with a 2 MiB gap.
class Placement {
 public:
  explicit Placement(const wl::Workload& w) {
    for (const wl::Op* op : w.ops_in_order()) {
      for (const auto& t : op->inputs) add(t.name, t.bytes());
      for (const auto& t : op->outputs) add(t.name, t.bytes());
    }
  }
  uint64_t region(const std::string& tensor) { return add(tensor, 0); }
  uint64_t add(const std::string& tensor, uint64_t bytes) {
    auto it = base_.find(tensor);
    if (it != base_.end()) return it->second;
    constexpr uint64_t kAlign = uint64_t(2) << 20;
    uint64_t b = next_;
    next_ += (std::max<uint64_t>(bytes, 1) + 2 * kAlign - 1) / kAlign * kAlign;
    base_[tensor] = b;
    return b;
  }

 private:
  std::map<std::string, uint64_t> base_;
  uint64_t next_ = uint64_t(1) << 40;
};

Measured run_gemm(gpu::GpuModel& m, const WorkloadRunOptions& opt, const ConfigNode& hw, const wl::Op& op,
                  const ir::BufferPlacement& place) {
  // A batched GEMM runs as one GEMM with the batches stacked along M (same tile count when M is a
  // multiple of the tile; operand B is then shared, which understates its traffic: docs/workloads.md).
  // The matmul's dtype picks the kernel as `gtsim waves --dtype` does: bf16, f16, tf32 and e4m3 on the
  // tensor cores (gemm_persistent.kir), f32 on the CUDA cores (gemm_fp32.kir); e5m2 has no GEMM here.
  if (op.dtype == ir::DType::kE5M2)
    throw InputError(
        op.pos, "matmul '" + op.name + "': no e5m2 GEMM kernel, expected bf16, f16, tf32, fp8 (e4m3) or f32 operands");
  const std::string dt(ir::dtype_name(op.dtype));
  const int64_t M = op.mm.batch * op.mm.M;
  // Without --tile, the kernel a library would pick (`gtsim gemm`'s analytic ranking: Hopper's TMA +
  // wgmma kernel, the align1 fallback, split-k, ...); with it, that mma.sync tile data-parallel.
  const GemmPlan p = opt.gemm_tile.empty() ? rank_gemm_candidates(hw, M, op.mm.N, op.mm.K, dt).front().plan
                                           : plan_gemm(hw, M, op.mm.N, op.mm.K, parse_tile(opt.gemm_tile, dt),
                                                       GemmSchedule::kDataParallel, 0, dt);
  Measured me = run_on(m, *ir::Program::build(gemm_kernel(p), gemm_params(p, 0, gemm_work_items(p)), place));
  if (gemm_has_reduce(p)) {  // split-K's reduction launch, on the same machine (its workspace in the L2)
    const Measured red = run_on(m, *ir::Program::build(gemm_kernel(p), gemm_reduce_params(p), place));
    me.time_us += red.time_us, me.launch_us += red.launch_us;
    me.rd += red.rd, me.wr += red.wr;
    me.dirty_end = red.dirty_end;
    me.sampled = me.sampled || red.sampled;
  }
  me.kernel = p.tile_name() + " " + schedule_name(p.schedule) +
              (gemm_has_reduce(p) ? " split " + std::to_string(p.ksplit) : "") + " (" + gemm_kernel_file(p) + ")";
  return me;
}

Measured run_flash(gpu::GpuModel& m, const wl::Op& op, const ir::BufferPlacement& place) {
  const auto& a = op.attn;
  const ir::Kernel& k = a.backward ? flash_bwd_kernel() : flash_kernel();
  return run_on(m, *ir::Program::build(k, {{"B", a.B}, {"H", a.H}, {"T", a.T}, {"D", a.d}}, place));
}

// Grid-stride kernels (elementwise, softmax, reduction): every iteration, sampled by the engine.
Measured run_grid_stride(gpu::GpuModel& m, const wl::Op& op, const wl::LowerOptions& lo,
                         const ir::BufferPlacement& place) {
  wl::LoweredKernel k = op.kind == wl::OpKind::kElementwise ? wl::lower_elementwise(op, lo)
                        : op.kind == wl::OpKind::kSoftmax   ? wl::lower_softmax(op, lo)
                                                            : wl::lower_reduction(op, lo);
  return run_on(m, *ir::Program::build(*k.kernel, k.slice(0, k.full_iterations), place));
}

// Kernel buffer name -> workload tensor region, by the lowering's naming.
ir::BufferPlacement place_op(const wl::Op& op, Placement& pl) {
  ir::BufferPlacement m;
  auto in = [&](size_t i) {
    return i < op.inputs.size() ? pl.region(op.inputs[i].name) : pl.region(op.name + ".in" + std::to_string(i));
  };
  auto out = [&](size_t i) {
    return i < op.outputs.size() ? pl.region(op.outputs[i].name) : pl.region(op.name + ".out" + std::to_string(i));
  };
  switch (op.kind) {
    case wl::OpKind::kMatmul:
      m = {
          {"A", in(0)},
          {"B", in(1)},
          {"C", out(0)},
          {"Cacc", pl.region(op.name + ".acc")},
          // split-k's fp32 partials, K slices x M x N x 4 bytes: room for up to 1024 slices (address
          // space only; the model touches what the kernel writes)
          {"W", pl.add(op.name + ".splitk_workspace", (op.outputs.empty() ? 1 : op.outputs[0].elements()) * 4 * 1024)}};
      break;
    case wl::OpKind::kAttention:
      if (op.attn.backward) {
        // inputs q, k, v, o, dO; outputs dq, dk, dv. The kernel reads the forward's row statistics
        // and FA2's rowsum(dO * O) (LSE, Dv) and accumulates dQ in f32 (dQacc): own regions.
        m = {{"Q", in(0)},
             {"K", in(1)},
             {"V", in(2)},
             {"dO", in(4)},
             {"LSE", pl.region(op.name + ".lse")},
             {"Dv", pl.region(op.name + ".dv_rowsum")},
             {"dQacc", pl.region(op.name + ".dqacc")},
             {"dK", out(1)},
             {"dV", out(2)}};
      } else {
        m = {{"Q", in(0)}, {"K", in(1)}, {"V", in(2)}, {"O", out(0)}};
      }
      break;
    case wl::OpKind::kElementwise:
      for (size_t i = 0; i < op.inputs.size(); ++i) m["x" + std::to_string(i)] = in(i);
      for (size_t i = 0; i < op.outputs.size(); ++i) m["y" + std::to_string(i)] = out(i);
      break;
    default:
      m = {{"x", in(0)}, {"y", out(0)}};
  }
  return m;
}

}  // namespace

WorkloadReport run_workload(const ConfigNode& hw, const wl::Workload& input, const WorkloadRunOptions& opt) {
  wl::Workload w = input;
  wl::PassOptions po;
  po.fusion = opt.fusion;
  po.recompute = opt.recompute;
  auto passes = wl::run_passes(w, po);
  auto specs = gpu::GpuSpecs::parse(hw);
  hw.mark_used_recursively();
  // All kernels run on one machine, each tensor in its own address region, so a consumer finds
  // in the L2 what its producer left there (docs/workloads.md, "Runs and sampling").
  gpu::SamplingPolicy sampling;
  sampling.exact = opt.exact;
  auto machine = [&] {
    auto m = std::make_unique<gpu::GpuModel>(hw);
    m->set_sampling(sampling);
    if (opt.timeline) m->record_timeline(*opt.timeline);
    return m;
  };
  auto shared_model = machine();
  std::vector<nlohmann::json> timelines;  // one per machine (several without carry_l2)
  Placement placement(w);
  wl::LowerOptions lo;
  lo.ctas = int(specs.sm.count) * 8;
  WorkloadReport rep;
  for (const wl::Op* op : w.ops_in_order()) {
    Measured me;
    if (!opt.carry_l2) {
      if (opt.timeline) timelines.push_back(shared_model->timeline_json());
      shared_model = machine();
    }
    ir::BufferPlacement place = place_op(*op, placement);
    switch (op->kind) {
      case wl::OpKind::kMatmul:
        me = run_gemm(*shared_model, opt, hw, *op, place);
        break;
      case wl::OpKind::kAttention:
        me = run_flash(*shared_model, *op, place);
        break;
      default:
        me = run_grid_stride(*shared_model, *op, lo, place);
    }
    KernelRecord r;
    r.kernel = me.kernel;
    r.op = op->name;
    r.kind = std::string(wl::op_kind_name(op->kind));
    // back to back into a stream, each launch pays the stream's gap; a CUDA graph is one launch
    r.time_us = opt.cuda_graph ? me.time_us - me.launch_us : me.time_us + specs.launch.stream_gap_us;
    r.dram_read_bytes = me.rd;
    r.dram_write_bytes = me.wr;
    r.l2_dirty_bytes_at_end = me.dirty_end;
    r.min_bytes = op->min_bytes();
    r.flops = op->flops();
    r.intensity = (me.rd + me.wr) ? double(r.flops) / double(me.rd + me.wr) : 0.0;
    r.l2_hit_rate = me.l2_hit;
    r.sampled = me.sampled;
    r.fraction_simulated = me.fraction_simulated;
    r.estimated_error_pct = me.estimated_error_pct;
    rep.kernels.push_back(r);
  }
  if (opt.timeline) {
    timelines.push_back(shared_model->timeline_json());
    rep.timeline = gpu::join_timelines(timelines);
  }
  if (opt.cuda_graph && !rep.kernels.empty()) rep.total_us += specs.launch.overhead_us;  // one graph launch
  for (const auto& k : rep.kernels) {
    rep.total_us += k.time_us, rep.dram_bytes += k.dram_read_bytes + k.dram_write_bytes;
    // one L2 carried through the workload: what the last kernel leaves dirty is the workload's; each
    // kernel on a fresh machine leaves its own
    rep.l2_dirty_bytes_at_end =
        opt.carry_l2 ? k.l2_dirty_bytes_at_end : rep.l2_dirty_bytes_at_end + k.l2_dirty_bytes_at_end;
  }
  ir::DType dt = w.ops_in_order().empty() ? ir::DType::kBf16 : w.ops_in_order()[0]->dtype;
  rep.ridge_flops_per_byte = config_peak_flops(hw, dt) / config_hbm_bytes_per_s(hw);
  nlohmann::json ks = nlohmann::json::array();
  std::ostringstream o;
  char buf[320];
  std::snprintf(buf, sizeof buf, "%-34s %-11s %10s %6s %12s %12s %9s %-7s\n", "kernel", "kind", "time_us", "share",
                "dram_MB", "GFLOP", "flop/B", "bound");
  o << buf;
  for (auto& k : rep.kernels) {
    k.share = rep.total_us > 0 ? k.time_us / rep.total_us : 0;
    // Elementwise / rowwise kernels run on the CUDA cores: their ridge is the f32 FFMA one.
    const bool tensor = k.kind == "matmul" || k.kind == "attention";
    const double ridge =
        tensor ? rep.ridge_flops_per_byte : config_peak_flops(hw, ir::DType::kF32) / config_hbm_bytes_per_s(hw);
    k.bound = k.intensity < ridge ? "memory" : "compute";
    ks.push_back({{"kernel", k.kernel},
                  {"op", k.op},
                  {"kind", k.kind},
                  {"time_us", k.time_us},
                  {"share", k.share},
                  {"dram_read_bytes", k.dram_read_bytes},
                  {"dram_write_bytes", k.dram_write_bytes},
                  {"l2_dirty_bytes_at_end", k.l2_dirty_bytes_at_end},
                  {"min_bytes", k.min_bytes},
                  {"flops", k.flops},
                  {"intensity", k.intensity},
                  {"bound", k.bound},
                  {"l2_hit_rate", k.l2_hit_rate},
                  {"sampled", k.sampled},
                  {"fraction_simulated", k.fraction_simulated},
                  {"estimated_error_pct", k.estimated_error_pct}});
    std::snprintf(buf, sizeof buf, "%-34.34s %-11s %10.2f %5.1f%% %12.1f %12.2f %9.2f %-7s\n", k.op.c_str(),
                  k.kind.c_str(), k.time_us, 100 * k.share, double(k.dram_read_bytes + k.dram_write_bytes) / 1e6,
                  double(k.flops) / 1e9, k.intensity, k.bound.c_str());
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "total %.2f us, %.1f MB DRAM, ridge %.1f flop/B%s", rep.total_us,
                double(rep.dram_bytes) / 1e6, rep.ridge_flops_per_byte,
                opt.cuda_graph ? " (CUDA graph: one launch)" : "");
  o << buf;
  // the writes DRAM has not seen yet (docs/units.md): stores still dirty in the L2 at the end
  if (rep.l2_dirty_bytes_at_end > 0) {
    std::snprintf(buf, sizeof buf, "; %.1f MB left dirty in the L2", double(rep.l2_dirty_bytes_at_end) / 1e6);
    o << buf;
  }
  o << "\n";
  // which GEMM kernel each matmul ran: the library's pick (`gtsim gemm`) unless --tile fixed one
  std::string gemms;
  for (const auto& k : rep.kernels)
    if (k.kind == "matmul") gemms += (gemms.empty() ? "" : "; ") + k.op + " " + k.kernel;
  if (!gemms.empty())
    o << "GEMM kernels (" << (opt.gemm_tile.empty() ? "as gtsim gemm picks" : "--tile " + opt.gemm_tile)
      << "): " << gemms << "\n";
  nlohmann::json pj = nlohmann::json::array();
  for (const auto& p : passes)
    pj.push_back({{"pass", p.pass}, {"ops_before", p.ops_before}, {"ops_after", p.ops_after}, {"notes", p.notes}});
  rep.json = {{"workload", w.name()},
              {"kernels", ks},
              {"total_us", rep.total_us},
              {"dram_bytes", rep.dram_bytes},
              {"l2_dirty_bytes_at_end", rep.l2_dirty_bytes_at_end},
              {"ridge_flops_per_byte", rep.ridge_flops_per_byte},
              {"cuda_graph", opt.cuda_graph},
              {"passes", pj}};
  rep.text = o.str();
  return rep;
}

}  // namespace gtsim::analytic
