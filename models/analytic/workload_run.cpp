#include "models/analytic/workload_run.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "kernels_ir/graph/lower_gpu.hpp"
#include "kernels_ir/graph/passes.hpp"
#include "kernels_ir/parser.hpp"
#include "models/analytic/gemm_plan.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/specs.hpp"

#ifndef GTSIM_SOURCE_DIR
#define GTSIM_SOURCE_DIR "."
#endif

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
  std::call_once(once, [] {
    k = ir::parse_kernel_file(std::string(GTSIM_SOURCE_DIR) + "/kernels_ir/lib/flash_attention_fwd.kir");
  });
  return *k;
}

const ir::Kernel& flash_bwd_kernel() {
  static std::once_flag once;
  static std::unique_ptr<ir::Kernel> k;
  std::call_once(once, [] {
    k = ir::parse_kernel_file(std::string(GTSIM_SOURCE_DIR) + "/kernels_ir/lib/flash_attention_bwd.kir");
  });
  return *k;
}

struct Measured {
  std::string kernel;
  double time_us = 0, launch_us = 0;
  uint64_t rd = 0, wr = 0;
  double l2_hit = 0;
  bool sampled = false;
  int64_t warmup_iterations = 0;
};

// Bytes the run writes to DRAM. Exact runs: the model's dirty-line evictions during the kernel
// (Nsight Compute's dram__bytes_write.sum). Sampled runs (a slice of a kernel far larger than the
// L2, on a cold machine) would leave most of their writes dirty in the L2, so they count every
// sector stored into the L2 (each generated/library kernel stores a sector once): the write-back
// the slice causes, which scaled is the full kernel's write traffic to within one L2 of dirty lines.
uint64_t written_bytes(const gpu::KernelResult& r, bool sampled) {
  if (!sampled) return r.dram_write_bytes;
  uint64_t stored = 0;
  if (auto it = r.metrics.find("lts__t_sectors_srcunit_tex_op_write.sum"); it != r.metrics.end())
    stored = it->get<uint64_t>() * 32;
  return std::max<uint64_t>(r.dram_write_bytes, stored);
}

// Runs `prog` and scales span and bytes by `scale` (sampling: the run covered 1/scale of the work).
// `count_stored`: writes as every sector stored (a cold slice, see written_bytes); otherwise the
// model's evictions (exact runs, and steady-state slices that follow a warm-up).
Measured run_scaled(gpu::GpuModel& m, const ir::Program& prog, double scale, bool sampled, bool count_stored) {
  auto r = m.run(prog);
  Measured x;
  x.kernel = r.kernel;
  x.launch_us = r.launch_overhead_us;
  x.time_us = r.launch_overhead_us + (r.time_us - r.launch_overhead_us) * scale;
  x.rd = uint64_t(double(r.dram_read_bytes) * scale);
  x.wr = uint64_t(double(written_bytes(r, count_stored)) * scale);
  x.l2_hit = r.l2_hit_rate;
  x.sampled = sampled;
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

struct RunCtx {
  const ConfigNode& hw;
  const WorkloadRunOptions& opt;
  std::unique_ptr<gpu::GpuModel>& shared;  // the machine that carries L2 contents across kernels
  bool sampled = false;                    // this op runs sampled (on a fresh machine)
  // The machine for one run of this op: the shared one, or for a sampled op a fresh one
  // (the slice must not find in the L2 what a previous slice left there).
  gpu::GpuModel& machine(std::unique_ptr<gpu::GpuModel>& fresh) {
    if (!sampled) return *shared;
    fresh = std::make_unique<gpu::GpuModel>(hw);
    return *fresh;
  }
};

Measured run_gemm(RunCtx& c, const wl::Op& op, const ir::BufferPlacement& place) {
  // A batched GEMM runs as one GEMM with the batches stacked along M (same tile count when M is a
  // multiple of the tile; operand B is then shared, which understates its traffic: docs/workloads.md).
  GemmPlan p = plan_gemm(c.hw, op.mm.batch * op.mm.M, op.mm.N, op.mm.K, parse_tile(c.opt.gemm_tile),
                         GemmSchedule::kDataParallel);
  const int64_t rounds = p.waves;
  c.sampled = !c.opt.exact && rounds > 2;
  auto run = [&](int64_t base, int64_t count) {
    std::unique_ptr<gpu::GpuModel> fresh;
    auto prog = ir::Program::build(gemm_kernel(), gemm_params(p, base, count), place);
    return run_scaled(c.machine(fresh), *prog, 1.0, c.sampled, c.sampled);
  };
  if (!c.sampled) return run(0, p.tiles);
  Measured full = run(0, p.wave_size);
  int64_t tail_base = (rounds - 1) * p.wave_size;
  Measured tail = run(tail_base, p.tiles - tail_base);
  Measured r = full;
  r.time_us = full.launch_us + double(rounds - 1) * (full.time_us - full.launch_us) + (tail.time_us - tail.launch_us);
  r.rd = uint64_t(double(rounds - 1) * double(full.rd)) + tail.rd;
  r.wr = uint64_t(double(rounds - 1) * double(full.wr)) + tail.wr;
  r.sampled = true;
  return r;
}

Measured run_flash(RunCtx& c, const wl::Op& op, uint32_t sms, const ir::BufferPlacement& place) {
  const auto& a = op.attn;
  int64_t heads = a.B * a.H;
  int64_t ctas_per_head = (a.T + 63) / 64;
  // Sampling: enough heads for two waves of CTAs, scaled to all heads (heads are independent).
  int64_t h =
      c.opt.exact ? heads : std::min<int64_t>(heads, std::max<int64_t>(1, 2 * int64_t(sms) * 2 / ctas_per_head));
  c.sampled = h < heads;
  std::unique_ptr<gpu::GpuModel> fresh;
  const ir::Kernel& k = a.backward ? flash_bwd_kernel() : flash_kernel();
  auto prog = ir::Program::build(k, {{"B", 1}, {"H", h}, {"T", a.T}, {"D", a.d}}, place);
  return run_scaled(c.machine(fresh), *prog, double(heads) / double(h), c.sampled, c.sampled);
}

// Grid-stride kernels (elementwise, softmax, reduction). Sampled when the loop has more iterations
// than a warm-up plus the slice: on a fresh machine, iterations [0, w) fill the L2 with this
// kernel's own mix of clean and dirty lines (elementwise: a touch-only twin, same accesses) (w = L2 bytes / bytes per
// iteration, rounded up, + 1); then iterations [w, w + s) run as a second launch and are measured: steady state, where
// every line allocated evicts one, so DRAM writes (dirty evictions) and the time spent on them are those of the middle
// of the full kernel. Span and bytes are scaled by the elements (rows) of the op over those of the slice. Small kernels
// run in full on the shared machine (L2 carry-over).
Measured run_grid_stride(RunCtx& c, const wl::Op& op, wl::LowerOptions lo, uint64_t l2_bytes,
                         const ir::BufferPlacement& place) {
  lo.iteration_limit = std::max<int64_t>(c.opt.sample_iterations, 1);
  wl::LoweredKernel k = op.kind == wl::OpKind::kElementwise ? wl::lower_elementwise(op, lo)
                        : op.kind == wl::OpKind::kSoftmax   ? wl::lower_softmax(op, lo)
                                                            : wl::lower_reduction(op, lo);
  const int64_t warm =
      int64_t((l2_bytes + k.bytes_per_iteration - 1) / std::max<uint64_t>(k.bytes_per_iteration, 1)) + 1;
  c.sampled = !c.opt.exact && k.full_iterations > warm + k.iterations;
  if (!c.sampled) {
    auto prog = ir::Program::build(*k.kernel, k.slice(0, k.full_iterations), place);
    return run_scaled(*c.shared, *prog, 1.0, false, false);
  }
  gpu::GpuModel m(c.hw);
  if (op.kind == wl::OpKind::kElementwise) {
    // The warm-up needs only the L2 state: the same loads and stores without the arithmetic.
    wl::LowerOptions tl = lo;
    tl.touch_only = true;
    wl::LoweredKernel t = wl::lower_elementwise(op, tl);
    m.run(*ir::Program::build(*t.kernel, t.slice(0, warm), place));
  } else {
    m.run(*ir::Program::build(*k.kernel, k.slice(0, warm), place));
  }
  auto prog = ir::Program::build(*k.kernel, k.slice(warm, k.iterations), place);
  Measured r = run_scaled(m, *prog, k.work_scale, true, false);
  r.warmup_iterations = warm;
  return r;
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
      m = {{"A", in(0)}, {"B", in(1)}, {"C", out(0)}, {"Cacc", pl.region(op.name + ".acc")}};
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
  // in the L2 what its producer left there. A sampled op (a slice of a kernel far larger than the
  // L2) runs on a fresh machine, and the shared one restarts cold after it: the full kernel would
  // have streamed its whole footprint through the L2 (docs/workloads.md, "Runs and sampling").
  auto shared_model = std::make_unique<gpu::GpuModel>(hw);
  Placement placement(w);
  const uint64_t l2_bytes = hw.at("l2").at("size_bytes").as<uint64_t>();
  wl::LowerOptions lo;
  lo.ctas = int(specs.sm.count) * 8;
  WorkloadReport rep;
  for (const wl::Op* op : w.ops_in_order()) {
    Measured me;
    RunCtx ctx{hw, opt, shared_model};
    if (!opt.carry_l2) shared_model = std::make_unique<gpu::GpuModel>(hw);
    ir::BufferPlacement place = place_op(*op, placement);
    switch (op->kind) {
      case wl::OpKind::kMatmul:
        me = run_gemm(ctx, *op, place);
        break;
      case wl::OpKind::kAttention:
        me = run_flash(ctx, *op, specs.sm.count, place);
        break;
      default:
        me = run_grid_stride(ctx, *op, lo, l2_bytes, place);
    }
    if (ctx.sampled) shared_model = std::make_unique<gpu::GpuModel>(hw);
    KernelRecord r;
    r.kernel = me.kernel;
    r.op = op->name;
    r.kind = std::string(wl::op_kind_name(op->kind));
    // back to back into a stream, each launch pays the stream's gap; a CUDA graph is one launch
    r.time_us = opt.cuda_graph ? me.time_us - me.launch_us : me.time_us + specs.launch.stream_gap_us;
    r.dram_read_bytes = me.rd;
    r.dram_write_bytes = me.wr;
    r.min_bytes = op->min_bytes();
    r.flops = op->flops();
    r.intensity = (me.rd + me.wr) ? double(r.flops) / double(me.rd + me.wr) : 0.0;
    r.l2_hit_rate = me.l2_hit;
    r.sampled = me.sampled;
    rep.kernels.push_back(r);
  }
  if (opt.cuda_graph && !rep.kernels.empty()) rep.total_us += specs.launch.overhead_us;  // one graph launch
  for (const auto& k : rep.kernels) rep.total_us += k.time_us, rep.dram_bytes += k.dram_read_bytes + k.dram_write_bytes;
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
                  {"min_bytes", k.min_bytes},
                  {"flops", k.flops},
                  {"intensity", k.intensity},
                  {"bound", k.bound},
                  {"l2_hit_rate", k.l2_hit_rate},
                  {"sampled", k.sampled}});
    std::snprintf(buf, sizeof buf, "%-34.34s %-11s %10.2f %5.1f%% %12.1f %12.2f %9.2f %-7s\n", k.op.c_str(),
                  k.kind.c_str(), k.time_us, 100 * k.share, double(k.dram_read_bytes + k.dram_write_bytes) / 1e6,
                  double(k.flops) / 1e9, k.intensity, k.bound.c_str());
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "total %.2f us, %.1f MB DRAM, ridge %.1f flop/B%s\n", rep.total_us,
                double(rep.dram_bytes) / 1e6, rep.ridge_flops_per_byte,
                opt.cuda_graph ? " (CUDA graph: one launch)" : "");
  o << buf;
  nlohmann::json pj = nlohmann::json::array();
  for (const auto& p : passes)
    pj.push_back({{"pass", p.pass}, {"ops_before", p.ops_before}, {"ops_after", p.ops_after}, {"notes", p.notes}});
  rep.json = {{"workload", w.name()},
              {"kernels", ks},
              {"total_us", rep.total_us},
              {"dram_bytes", rep.dram_bytes},
              {"ridge_flops_per_byte", rep.ridge_flops_per_byte},
              {"cuda_graph", opt.cuda_graph},
              {"passes", pj}};
  rep.text = o.str();
  return rep;
}

}  // namespace gtsim::analytic
