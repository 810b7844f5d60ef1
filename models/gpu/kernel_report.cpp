#include "models/gpu/kernel_report.hpp"

#include <cmath>

namespace gtsim::gpu {
namespace {

SmCounterValues read_counters(const Sm& sm) {
  SmCounterValues v{};
  for (int i = 0; i < kNumSmCounters; ++i) v[size_t(i)] = sm.counter(SmCounter(i));
  return v;
}

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

// Sums of each SM counter over all SMs, for this kernel only.
SmCounterValues kernel_totals(const std::vector<std::unique_ptr<Sm>>& sms, const KernelSnapshot& before) {
  SmCounterValues t{};
  for (size_t s = 0; s < sms.size(); ++s) {
    SmCounterValues now = read_counters(*sms[s]);
    for (size_t i = 0; i < t.size(); ++i) t[i] += now[i] - before.sm[s][i];
  }
  return t;
}

void add_launch_metrics(nlohmann::json& m, const ReportInputs& in, uint64_t ctas) {
  const Occupancy& o = in.occ;
  m["launch__grid_size"] = ctas;
  m["launch__block_size"] = in.program.threads_per_cta();
  m["launch__registers_per_thread"] = in.program.regs_per_thread();
  m["launch__shared_mem_per_block"] = in.program.shared_bytes();
  m["launch__shared_mem_config_size"] = o.carveout_bytes;
  m["launch__sm_count"] = in.specs.sm.count;
  m["launch__waves_per_multiprocessor"] = ratio(double(ctas), double(o.ctas_per_sm) * in.specs.sm.count);
  m["launch__occupancy_limit_registers"] = o.limit_registers;
  m["launch__occupancy_limit_shared_mem"] = o.limit_shared_mem;
  m["launch__occupancy_limit_warps"] = o.limit_warps;
  m["launch__occupancy_limit_blocks"] = o.limit_blocks;
  m["sm__maximum_warps_per_active_cycle_pct"] = o.theoretical_pct;
}

void add_sm_metrics(nlohmann::json& m, const ReportInputs& in, const SmCounterValues& t, uint64_t cycles) {
  const SmSpecs& sm = in.specs.sm;
  double active = double(t[kCyclesActive]);
  double issue_active = double(t[kIssueActiveCycles]);
  m["sm__cycles_elapsed.max"] = cycles;
  m["sm__cycles_active.avg"] = ratio(active, sm.count);
  m["gpu__time_duration.sum"] = double(cycles) / in.sm_mhz * 1000.0;
  m["sm__warps_active.avg.pct_of_peak_sustained_active"] =
      100.0 * ratio(double(t[kWarpCyclesActive]), active * sm.max_warps);
  m["smsp__inst_executed.sum"] = t[kInstExecuted];
  m["smsp__thread_inst_executed.sum"] = t[kThreadInstExecuted];
  m["sm__inst_executed.avg.per_cycle_active"] = ratio(double(t[kInstExecuted]), active);
  m["smsp__issue_active.avg.pct_of_peak_sustained_active"] = 100.0 * ratio(issue_active, active * sm.sub_partitions);
  m["smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"] = ratio(double(t[kStallScoreboard]), issue_active);
  m["smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"] =
      ratio(double(t[kStallMemory]), issue_active);
  m["smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio"] =
      ratio(double(t[kStallUnitBusy]), issue_active);
  m["smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"] = ratio(double(t[kStallBarrier]), issue_active);
  m["smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio"] =
      ratio(double(t[kStallNotSelected]), issue_active);
  m["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] =
      100.0 * ratio(double(t[kPipeBusyBase + int(Pipe::kTensor)]), active * sm.sub_partitions);
  m["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"] =
      100.0 * ratio(double(t[kPipeBusyBase + int(Pipe::kFp32)]), active * sm.sub_partitions);
  m["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] = t[kSharedWavefronts];
  m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"] = t[kSharedWavefronts] - t[kSharedIdealWavefronts];
  m["smsp__sass_inst_executed_op_shared_ld.sum"] = t[kSharedLoads];
  m["smsp__sass_inst_executed_op_shared_st.sum"] = t[kSharedStores];
  m["smsp__inst_executed_op_global.sum"] = t[kGlobalInsts];
}

}  // namespace

KernelSnapshot KernelSnapshot::take(const Simulation& sim, const mem::GpuMemorySystem& memory,
                                    const std::vector<std::unique_ptr<Sm>>& sms) {
  KernelSnapshot s;
  s.stats = sim.stats().to_json();
  s.memory = memory.totals();
  s.events = sim.events_processed();
  for (const auto& sm : sms) s.sm.push_back(read_counters(*sm));
  return s;
}

nlohmann::json json_difference(const nlohmann::json& after, const nlohmann::json& before) {
  if (after.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = after.begin(); it != after.end(); ++it) {
      auto b = before.is_object() ? before.find(it.key()) : before.end();
      out[it.key()] = b != before.end() ? json_difference(it.value(), *b) : it.value();
    }
    return out;
  }
  if (after.is_number_unsigned() && before.is_number_unsigned()) {
    uint64_t a = after.get<uint64_t>(), b = before.get<uint64_t>();
    return a >= b ? a - b : 0;
  }
  return after;
}

KernelResult make_kernel_result(const ReportInputs& in, const Simulation& sim, const mem::GpuMemorySystem& memory,
                                const std::vector<std::unique_ptr<Sm>>& sms) {
  KernelResult r;
  SmCounterValues t = kernel_totals(sms, in.before);
  uint64_t ctas = in.program.grid().count();
  r.kernel = in.program.name();
  r.hw = in.specs.name;
  r.cycles = in.end_cycle - in.start_cycle;
  r.launch_overhead_us = in.specs.launch.overhead_us;
  r.sm_mhz = in.sm_mhz;
  r.time_us = r.launch_overhead_us + double(r.cycles) / in.sm_mhz;
  r.stream_gap_us = in.specs.launch.stream_gap_us;
  r.ctas = ctas;
  r.ctas_per_sm = in.occ.ctas_per_sm;
  r.occupancy_limiter = in.occ.limiter;
  r.waves = ratio(double(ctas), double(in.occ.ctas_per_sm) * in.specs.sm.count);
  r.warp_instructions = t[kInstExecuted];
  r.thread_instructions = t[kThreadInstExecuted];
  r.flops = t[kFlops];
  mem::GpuMemorySystem::Totals now = memory.totals(), was = in.before.memory;
  r.dram_read_bytes = now.dram_read_bytes - was.dram_read_bytes;
  r.dram_write_bytes = now.dram_write_bytes - was.dram_write_bytes;
  r.l2_dirty_bytes_at_end = memory.l2_occupancy().dirty_sectors * 32;
  uint64_t hits = now.l2_sector_hits - was.l2_sector_hits, misses = now.l2_sector_misses - was.l2_sector_misses;
  r.l2_hit_rate = ratio(double(hits), double(hits + misses));
  r.events = sim.events_processed() - in.before.events;
  add_launch_metrics(r.metrics, in, ctas);
  add_sm_metrics(r.metrics, in, t, r.cycles);
  memory.add_metrics(r.metrics, was);
  r.stats = json_difference(sim.stats().to_json(), in.before.stats);
  return r;
}

int64_t KernelResult::whole_waves() const { return waves > 0 ? int64_t(std::ceil(waves - 1e-9)) : 0; }

double KernelResult::last_wave_fill() const {
  const int64_t w = whole_waves();
  return w > 0 ? waves - double(w - 1) : 0.0;
}

nlohmann::json KernelResult::to_json() const {
  nlohmann::json j;
  j["kernel"] = kernel;
  j["hw"] = hw;
  j["cycles"] = cycles;
  j["sm_mhz"] = sm_mhz;
  j["time_us"] = time_us;
  j["launch_overhead_us"] = launch_overhead_us;
  j["launch_stream_gap_us"] = stream_gap_us;
  j["ctas"] = ctas;
  j["ctas_per_sm"] = ctas_per_sm;
  j["occupancy_limiter"] = occupancy_limiter;
  j["waves"] = whole_waves();
  j["last_wave_fill"] = last_wave_fill();
  j["warp_instructions"] = warp_instructions;
  j["thread_instructions"] = thread_instructions;
  j["dram_read_bytes"] = dram_read_bytes;
  j["dram_write_bytes"] = dram_write_bytes;
  j["l2_dirty_bytes_at_end"] = l2_dirty_bytes_at_end;
  j["l2_hit_rate"] = l2_hit_rate;
  j["flops"] = flops;
  j["events"] = events;
  j["sim_wall_seconds"] = sim_wall_seconds;
  j["sampling"] = {{"exact", sampling.exact},
                   {"fraction_simulated", sampling.fraction_simulated},
                   {"estimated_error_pct", sampling.estimated_error_pct},
                   {"skipped_iterations", sampling.skipped_iterations},
                   {"skipped_ctas", sampling.skipped_ctas},
                   {"skipped_cycles", sampling.skipped_cycles},
                   {"loop_epochs", sampling.loop_epochs},
                   {"turnover_epochs", sampling.turnover_epochs},
                   {"warmed_lines", sampling.warmed_lines}};
  j["metrics"] = metrics;
  j["stats"] = stats;
  return j;
}

}  // namespace gtsim::gpu
