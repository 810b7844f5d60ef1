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
  if (per_cycle == 0) per_cycle = 2.0 * s.sm.units[size_t(gpu::Pipe::kFp32)].lanes * s.sm.sub_partitions;  // CUDA-core FMA
  return per_cycle * s.sm.count * s.clocks.sm_mhz * 1e6;
}

double config_hbm_bytes_per_s(const ConfigNode& hw) { return hw.at("hbm").at("bandwidth_gbps").as<double>() * 1e9; }

namespace {

const ir::Kernel& flash_kernel() {
  static std::once_flag once;
  static std::unique_ptr<ir::Kernel> k;
  std::call_once(once, [] { k = ir::parse_kernel_file(std::string(GTSIM_SOURCE_DIR) + "/kernels_ir/lib/flash_attention_fwd.kir"); });
  return *k;
}

struct Measured {
  std::string kernel;
  double time_us = 0, launch_us = 0;
  uint64_t rd = 0, wr = 0;
  double l2_hit = 0;
  bool sampled = false;
};

// Runs `prog` and scales span and bytes by `scale` (sampling: the run covered 1/scale of the work).
Measured run_scaled(gpu::GpuModel& m, const ir::Program& prog, double scale) {
  auto r = m.run(prog);
  Measured x;
  x.kernel = r.kernel;
  x.launch_us = r.launch_overhead_us;
  x.time_us = r.launch_overhead_us + (r.time_us - r.launch_overhead_us) * scale;
  x.rd = uint64_t(double(r.dram_read_bytes) * scale);
  x.wr = uint64_t(double(r.dram_write_bytes) * scale);
  x.l2_hit = r.l2_hit_rate;
  x.sampled = scale > 1.0;
  return x;
}

Measured run_gemm(gpu::GpuModel& m, const ConfigNode& hw, const wl::Op& op, const WorkloadRunOptions& opt) {
  // A batched GEMM runs as one GEMM with the batches stacked along M (same tile count when M is a
  // multiple of the tile; operand B is then shared, which understates its traffic: docs/workloads.md).
  GemmPlan p = plan_gemm(hw, op.mm.batch * op.mm.M, op.mm.N, op.mm.K, parse_tile(opt.gemm_tile), GemmSchedule::kDataParallel);
  const int64_t rounds = p.waves;
  auto run = [&](int64_t base, int64_t count, double scale) {
    auto prog = ir::Program::build(gemm_kernel(), gemm_params(p, base, count));
    return run_scaled(m, *prog, scale);
  };
  if (opt.exact || rounds <= 2) return run(0, p.tiles, 1.0);
  Measured full = run(0, p.wave_size, 1.0);
  int64_t tail_base = (rounds - 1) * p.wave_size;
  Measured tail = run(tail_base, p.tiles - tail_base, 1.0);
  Measured r = full;
  r.time_us = full.launch_us + double(rounds - 1) * (full.time_us - full.launch_us) + (tail.time_us - tail.launch_us);
  r.rd = uint64_t(double(rounds - 1) * double(full.rd)) + tail.rd;
  r.wr = uint64_t(double(rounds - 1) * double(full.wr)) + tail.wr;
  r.sampled = true;
  return r;
}

Measured run_flash(gpu::GpuModel& m, const wl::Op& op, const WorkloadRunOptions& opt, uint32_t sms) {
  const auto& a = op.attn;
  int64_t heads = a.B * a.H;
  int64_t ctas_per_head = (a.T + 63) / 64;
  // Sampling: enough heads for two waves of CTAs, scaled to all heads (heads are independent).
  int64_t h = opt.exact ? heads : std::min<int64_t>(heads, std::max<int64_t>(1, 2 * int64_t(sms) * 2 / ctas_per_head));
  auto prog = ir::Program::build(flash_kernel(), {{"B", 1}, {"H", h}, {"T", a.T}, {"D", a.d}});
  return run_scaled(m, *prog, double(heads) / double(h));
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
  // Every IR Program places its buffers from the same start address, so two kernels' different
  // tensors alias in the address space; until buffers can be placed, each kernel runs on a fresh
  // machine (cold L2) unless carry_l2 is set (docs/workloads.md).
  auto shared_model = std::make_unique<gpu::GpuModel>(hw);
  wl::LowerOptions lo;
  lo.ctas = int(specs.sm.count) * 8;
  lo.iteration_limit = opt.exact ? 0 : opt.sample_iterations;
  WorkloadReport rep;
  for (const wl::Op* op : w.ops_in_order()) {
    Measured me;
    if (!opt.carry_l2) shared_model = std::make_unique<gpu::GpuModel>(hw);
    gpu::GpuModel& model = *shared_model;
    switch (op->kind) {
      case wl::OpKind::kMatmul: me = run_gemm(model, hw, *op, opt); break;
      case wl::OpKind::kAttention:
        if (op->attn.backward) throw InputError(op->pos, "attention backward is not lowered to the GPU yet");
        me = run_flash(model, *op, opt, specs.sm.count);
        break;
      default: {
        wl::LoweredKernel k = op->kind == wl::OpKind::kElementwise ? wl::lower_elementwise(*op, lo)
                              : op->kind == wl::OpKind::kSoftmax   ? wl::lower_softmax(*op, lo)
                                                                   : wl::lower_reduction(*op, lo);
        auto prog = ir::Program::build(*k.kernel, k.params);
        me = run_scaled(model, *prog, double(k.full_iterations) / double(k.iterations));
      }
    }
    KernelRecord r;
    r.kernel = me.kernel;
    r.op = op->name;
    r.kind = std::string(wl::op_kind_name(op->kind));
    r.time_us = opt.cuda_graph ? me.time_us - me.launch_us : me.time_us;
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
  std::snprintf(buf, sizeof buf, "%-34s %-11s %10s %6s %12s %12s %9s %-7s\n", "kernel", "kind", "time_us", "share", "dram_MB",
                "GFLOP", "flop/B", "bound");
  o << buf;
  for (auto& k : rep.kernels) {
    k.share = rep.total_us > 0 ? k.time_us / rep.total_us : 0;
    k.bound = k.intensity < rep.ridge_flops_per_byte ? "memory" : "compute";
    ks.push_back({{"kernel", k.kernel}, {"op", k.op}, {"kind", k.kind}, {"time_us", k.time_us}, {"share", k.share},
                  {"dram_read_bytes", k.dram_read_bytes}, {"dram_write_bytes", k.dram_write_bytes},
                  {"min_bytes", k.min_bytes}, {"flops", k.flops}, {"intensity", k.intensity}, {"bound", k.bound},
                  {"l2_hit_rate", k.l2_hit_rate}, {"sampled", k.sampled}});
    std::snprintf(buf, sizeof buf, "%-34.34s %-11s %10.2f %5.1f%% %12.1f %12.2f %9.2f %-7s\n", k.op.c_str(), k.kind.c_str(),
                  k.time_us, 100 * k.share, double(k.dram_read_bytes + k.dram_write_bytes) / 1e6, double(k.flops) / 1e9,
                  k.intensity, k.bound.c_str());
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "total %.2f us, %.1f MB DRAM, ridge %.1f flop/B%s\n", rep.total_us, double(rep.dram_bytes) / 1e6,
                rep.ridge_flops_per_byte, opt.cuda_graph ? " (CUDA graph: one launch)" : "");
  o << buf;
  nlohmann::json pj = nlohmann::json::array();
  for (const auto& p : passes) pj.push_back({{"pass", p.pass}, {"ops_before", p.ops_before}, {"ops_after", p.ops_after}, {"notes", p.notes}});
  rep.json = {{"workload", w.name()}, {"kernels", ks}, {"total_us", rep.total_us}, {"dram_bytes", rep.dram_bytes},
              {"ridge_flops_per_byte", rep.ridge_flops_per_byte}, {"cuda_graph", opt.cuda_graph}, {"passes", pj}};
  rep.text = o.str();
  return rep;
}

}  // namespace gtsim::analytic
