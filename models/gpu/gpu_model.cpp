// GpuModel: builds the machine (SMs, CTA scheduler, memory system) from a config and runs
// kernels one after another in one Simulation (L2 contents carry over between kernels).
#include "models/gpu/gpu_model.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "kernels_ir/ast.hpp"
#include "models/gpu/cta_scheduler.hpp"
#include "models/gpu/footprint.hpp"
#include "models/gpu/kernel_report.hpp"
#include "models/gpu/launch_history.hpp"
#include "models/gpu/occupancy.hpp"
#include "models/gpu/sm.hpp"
#include "models/gpu/specs.hpp"
#include "models/mem/memory_system.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {

namespace {
class NoopHandler final : public EventHandler {
 public:
  void handle_event(Tick, uint32_t, uint64_t) override {}
};
}  // namespace

struct GpuModel::Impl {
  GpuSpecs specs;
  Simulation sim;
  ClockDomain clock;
  StatGroup& gpu_stats;
  std::unique_ptr<mem::GpuMemorySystem> memory;
  std::unique_ptr<CtaScheduler> cta;
  std::vector<std::unique_ptr<Sm>> sms;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<Timeline> timeline;
  NoopHandler noop;
  const ir::Program* running = nullptr;
  bool broken = false;
  MemoryEstimate machine_bytes;
  std::map<std::string, std::shared_ptr<const ir::Kernel>> sources;  // by kernel file (add_source)

  explicit Impl(const ConfigNode& root);
  KernelResult run(const ir::Program& program);
  uint64_t tick_to_cycle(Tick t) const;
  std::string waiting_report(size_t max_lines) const;
  [[noreturn]] void fail_deadlock(const ir::Program& program) const;
  void check_sampled_time(const ir::Program& program, const SamplingReport& s, double mhz) const;
};

// Sampling fast-forwards time without events, so the simulated-time limit is checked on the
// kernel's end time with the skipped cycles counted.
void GpuModel::Impl::check_sampled_time(const ir::Program& program, const SamplingReport& s, double mhz) const {
  double end_ps = double(sim.now()) + double(s.skipped_cycles) * 1e6 / mhz;
  double limit_s = run_limits().max_sim_seconds;
  if (end_ps / 1e12 <= limit_s) return;
  char b[160];
  std::snprintf(b, sizeof b,
                "%.6g s of simulated time at the end of kernel %s (%.6g s of it fast-forwarded by sampling)",
                end_ps / 1e12, program.name().c_str(), double(s.skipped_cycles) / mhz / 1e6);
  char l[32];
  std::snprintf(l, sizeof l, "%g", limit_s);
  throw LimitError(std::string("simulated time limit reached: ") + b + ", above the limit of " + l +
                   " s; raise it with --max-sim-seconds");
}

GpuModel::Impl::Impl(const ConfigNode& root)
    : specs(GpuSpecs::parse(root)), clock(specs.clocks.sm_mhz), gpu_stats(sim.stats().child("gpu")) {
  // Refused before anything is allocated when the machine alone is above the memory limit.
  machine_bytes = machine_memory(root, specs);
  check_memory_limit(machine_bytes, "the machine " + specs.name);
  memory = mem::GpuMemorySystem::create(sim, gpu_stats, root, specs.sm.count);
  root.require_all_used();
  cta = std::make_unique<CtaScheduler>(sim, gpu_stats, clock);
  std::vector<Sm*> list;
  for (uint32_t i = 0; i < specs.sm.count; ++i) {
    sms.push_back(std::make_unique<Sm>(sim, gpu_stats, i, specs, clock, *memory, *cta));
    list.push_back(sms.back().get());
  }
  sampler = std::make_unique<Sampler>(sim.stats(), list, specs.sm.max_ctas, *memory, config_l2_bytes(root));
  for (auto& sm : sms) sm->set_sampler(sampler.get());
  cta->set_sampler(sampler.get());
  cta->set_sms(std::move(list));
  sim.set_stall_reporter([this] { return waiting_report(64); });
}

uint64_t GpuModel::Impl::tick_to_cycle(Tick t) const {
  uint64_t c = clock.cycle_at(t);
  while (clock.cycle_start(c) < t) ++c;
  return c;
}

std::string GpuModel::Impl::waiting_report(size_t max_lines) const {
  std::string all;
  for (const auto& sm : sms) sm->describe_waiting(all);
  size_t lines = 0, pos = 0;
  while (pos < all.size() && lines < max_lines) {
    pos = all.find('\n', pos);
    pos = pos == std::string::npos ? all.size() : pos + 1;
    ++lines;
  }
  size_t total = size_t(std::count(all.begin(), all.end(), '\n'));
  std::string out = all.substr(0, pos);
  if (total > lines) out += "  ... and " + std::to_string(total - lines) + " more warps\n";
  return out;
}

void GpuModel::Impl::fail_deadlock(const ir::Program& program) const {
  uint64_t c = tick_to_cycle(sim.now());
  std::string msg = "deadlock in kernel " + program.name() + " at cycle " + std::to_string(c) + " (" +
                    std::to_string(double(sim.now()) / double(kTicksPerNs)) + " ns of simulated time): nothing " +
                    "left to happen, but " + std::to_string(cta->dispatched() - cta->done()) + " CTAs have not " +
                    "finished (" + std::to_string(cta->done()) + " of " + std::to_string(program.grid().count()) +
                    " done). Waiting warps:\n" + waiting_report(64);
  throw SimulationError(msg);
}

KernelResult GpuModel::Impl::run(const ir::Program& program) {
  if (broken) throw SimulationError("this GpuModel stopped at an earlier simulation error; build a new one");
  auto wall0 = std::chrono::steady_clock::now();
  KernelShape shape{program.threads_per_cta(), program.regs_per_thread(), program.shared_bytes()};
  OccupancySourceFn where = [&] { return occupancy_source(program, sources); };
  Occupancy occ = compute_occupancy(specs.sm, specs.l1_unified_kb, shape, program.name(), where);
  // Up-front limits: the launch's state on top of the machine's, and its work.
  MemoryEstimate mem_total = machine_bytes, launch_bytes = launch_memory(program, specs, occ.ctas_per_sm);
  mem_total.bytes += launch_bytes.bytes;
  mem_total.parts += ", " + launch_bytes.parts;
  check_memory_limit(mem_total, "kernel " + program.name() + " on " + specs.name);
  WorkEstimate work = estimate_work(program);
  check_work_limit(work, program.name());
  if (work.ctas >= 0x1p63) {
    SourcePos pos = where().grid;
    if (pos.file.empty()) pos = SourcePos{"kernel " + program.name()};
    char n[32];
    std::snprintf(n, sizeof n, "%.3g", work.ctas);
    throw InputError(pos, "kernel " + program.name() + ": a grid of " + n + " CTAs, the model counts at most 2^63");
  }
  uint64_t ctas = program.grid().count();
  // Hopper lowers its SM clock while tensor cores work (clocks.sm_mhz_tensor): the kernel runs at
  // that clock if it issues a tensor-core instruction. Cycles keep counting across the change.
  double mhz = program.uses_tensor_cores() ? specs.clocks.sm_mhz_tensor : specs.clocks.sm_mhz;
  clock.retime(mhz, sim.now());
  memory->set_sm_clock(mhz);
  KernelSnapshot before = KernelSnapshot::take(sim, *memory, sms);
  memory->begin_kernel(occ.l1_bytes);
  uint64_t start = tick_to_cycle(sim.now());
  if (timeline) timeline->begin_kernel(program.name(), start);
  KernelLaunch launch{&program, program.grid(), program.warps_per_cta()};
  sampler->begin_kernel(program, ctas, occ.ctas_per_sm);  // before the SMs ask for its loop branch
  for (auto& sm : sms) sm->begin_kernel(launch);
  running = &program;
  broken = true;  // until the kernel completes cleanly
  if (ctas > 0) {
    cta->begin_kernel(ctas, occ.ctas_per_sm, specs.launch.cta_dispatch_cycles, start);
    sim.run();
  }
  bool idle = std::all_of(sms.begin(), sms.end(), [](const auto& sm) { return sm->idle(); });
  if (!cta->all_done() || !idle) fail_deadlock(program);
  uint64_t end = start;
  for (const auto& sm : sms) end = std::max(end, sm->last_activity_cycle());
  for (auto& sm : sms) sm->end_kernel(end);
  memory->end_kernel();
  broken = false;
  running = nullptr;
  SamplingReport sampling = sampler->end_kernel();
  check_sampled_time(program, sampling, mhz);
  ReportInputs in{specs, occ, program, before, start, end + sampling.skipped_cycles, mhz};
  KernelResult r = make_kernel_result(in, sim, *memory, sms);
  sampling.estimated_error_pct = r.cycles ? 100.0 * sampling.error_cycles / double(r.cycles) : 0.0;
  r.sampling = sampling;
  if (timeline) {
    nlohmann::json args = {{"cycles", r.cycles},
                           {"time_us", r.time_us},
                           {"ctas", r.ctas},
                           {"waves", r.waves},
                           {"fraction_simulated", sampling.fraction_simulated}};
    if (sampling.skipped_cycles)
      args["not_on_this_timeline"] = std::to_string(sampling.skipped_cycles) +
                                     " cycles fast-forwarded by sampling (docs/sampling.md); --exact shows every cycle";
    timeline->end_kernel(end, std::move(args));
  }
  r.sim_wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

GpuModel::GpuModel(const ConfigNode& root) : impl_(std::make_unique<Impl>(root)) {}
GpuModel::~GpuModel() = default;

KernelResult GpuModel::run(const ir::Program& program) { return impl_->run(program); }

void GpuModel::add_source(std::shared_ptr<const ir::Kernel> kernel) {
  if (kernel) impl_->sources[kernel->file] = std::move(kernel);
}

void GpuModel::set_sampling(const SamplingPolicy& policy) { impl_->sampler->set_policy(policy); }

void GpuModel::record_timeline(const TimelineOptions& opt) {
  Impl& m = *impl_;
  mem::GpuMemorySystem* memory = m.memory.get();
  auto sample = [memory] {
    mem::GpuMemorySystem::Totals t = memory->totals();
    mem::GpuMemorySystem::Queues q = memory->queues();
    return MemorySample{t.l2_sector_hits + t.l2_sector_misses, t.dram_read_bytes, t.dram_write_bytes,
                        q.requests_in_flight, q.hbm_backlog};
  };
  m.timeline = std::make_unique<Timeline>(opt, m.clock, m.specs.sm.count, m.specs.sm.sub_partitions,
                                          m.specs.sm.max_ctas, sample);
  for (auto& sm : m.sms) sm->set_timeline(m.timeline.get());
}

nlohmann::json GpuModel::timeline_json() const { return impl_->timeline ? impl_->timeline->to_json() : nullptr; }

void GpuModel::preload_l2(uint64_t base, uint64_t bytes, bool dirty) { impl_->memory->preload_l2(base, bytes, dirty); }

void GpuModel::idle(double us) {
  if (us <= 0) return;
  Simulation& sim = impl_->sim;
  sim.schedule(sim.now() + Tick(us * double(kTicksPerUs) + 0.5), &impl_->noop);
  sim.run();
}

}  // namespace gtsim::gpu
