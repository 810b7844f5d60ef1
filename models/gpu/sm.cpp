// The SM's issue stage: CTA launch, per-sub-partition warp scheduling, scoreboard, stall
// accounting, warp exit. Execution units are in sm_exec.cpp, synchronization in sm_sync.cpp.
#include "models/gpu/sm.hpp"

#include <algorithm>
#include <bit>

namespace gtsim::gpu {
namespace {

struct CounterDef {
  const char* name;
  const char* desc;
  const char* unit;
};

constexpr CounterDef kCounterDefs[kInstClassBase] = {
    {"inst_executed", "warp instructions issued", "warp instructions"},
    {"thread_inst_executed", "thread instructions (active lanes of issued warp instructions)", "thread instructions"},
    {"flops", "floating-point operations of issued instructions", "flop"},
    {"issue_active_cycles", "sub-partition cycles with at least one instruction issued (sum over sub-partitions)",
     "cycles"},
    {"cycles_active", "cycles with at least one warp resident", "cycles"},
    {"warp_cycles_active", "resident warps integrated over cycles", "warp cycles"},
    {"stall_scoreboard", "warp cycles waiting on a fixed-latency result (Nsight: wait)", "warp cycles"},
    {"stall_memory", "warp cycles waiting on a memory result or cp.async group (long scoreboard)", "warp cycles"},
    {"stall_unit_busy", "warp cycles ready but the unit or pipe was busy (pipe / MIO throttle)", "warp cycles"},
    {"stall_barrier", "warp cycles waiting at bar.sync or an mbarrier", "warp cycles"},
    {"stall_not_selected", "warp cycles ready while another warp issued", "warp cycles"},
    {"shared_requests", "shared-memory warp requests (ld/st/atom/ldmatrix/stmatrix)", "requests"},
    {"shared_wavefronts", "shared-memory wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared)", "wavefronts"},
    {"shared_ideal_wavefronts", "wavefronts had there been no bank conflict", "wavefronts"},
    {"shared_loads", "shared-memory load requests (incl. ldmatrix, atomics)", "requests"},
    {"shared_stores", "shared-memory store requests (incl. stmatrix)", "requests"},
    {"shared_pipe_busy", "cycles the SM's shared-memory pipe was serving wavefronts", "cycles"},
    {"global_insts", "global memory warp instructions sent to the memory system", "warp instructions"},
    {"global_requests", "128-byte line requests of global instructions", "requests"},
    {"global_sectors", "32-byte sectors of global instructions", "sectors"},
    {"l1_pipe_busy", "cycles the L1 tag pipe was accepting global requests (one per cycle)", "cycles"},
    {"tensor_writeback_cycles", "tensor-pipe cycles held by ldmatrix register writeback (all sub-partitions)",
     "cycles"},
    {"ctas_launched", "CTAs launched on this SM", "CTAs"},
    {"warps_launched", "warps launched on this SM", "warps"},
};

}  // namespace

Sm::Sm(Simulation& sim, StatGroup& parent, uint32_t id, const GpuSpecs& specs, const ClockDomain& clock,
       mem::GpuMemorySystem& memory, CtaListener& listener)
    : Component(sim, parent, "sm" + std::to_string(id), "gpu.sm"),
      id_(id),
      specs_(specs),
      clock_(clock),
      memory_(memory),
      listener_(listener) {
  const SmSpecs& s = specs.sm;
  for (int i = 0; i < kInstClassBase; ++i)
    ctr_[i] = &stats_.counter(kCounterDefs[i].name, kCounterDefs[i].desc, kCounterDefs[i].unit);
  ctr_[kCyclesActive]->set_time_like();  // residency integrals grow with time (sampling scales them so)
  ctr_[kWarpCyclesActive]->set_time_like();
  for (int i = 0; i < int(ir::OpClass::kCount); ++i)
    ctr_[kInstClassBase + i] = &stats_.child("inst_class")
                                    .counter(std::string(ir::op_class_name(ir::OpClass(i))),
                                             "warp instructions of this class", "warp instructions");
  for (int p = 0; p < kNumPipes; ++p)
    ctr_[kPipeBusyBase + p] =
        &stats_.child("unit_busy")
             .counter(pipe_name(Pipe(p)), "cycles the unit was occupied (sum over sub-partitions)", "cycles");
  for (int p = 0; p < kNumPipes; ++p) {
    ii_[p] = p == int(Pipe::kTensor) || p == int(Pipe::kNone) ? 1 : s.units[p].initiation_interval();
    latency_[p] = p == int(Pipe::kTensor) ? s.tensor.latency_cycles
                  : p == int(Pipe::kNone) ? 1
                                          : s.units[p].latency_cycles;
  }
  for (size_t t = 0; t < mma_rate_.size(); ++t) {
    mma_rate_[t] = s.tensor.mma_sync_flops_per_cycle[t] / s.sub_partitions;
    wgmma_rate_[t] = s.tensor.wgmma_flops_per_cycle[t] / s.sub_partitions;
  }
  ldmatrix_wb_per_reg_ = s.tensor.ldmatrix_writeback_cycles_per_reg;
  warps_.resize(s.max_warps);
  ctas_.resize(s.max_ctas);
  sps_.resize(s.sub_partitions);
  for (auto& sp : sps_) sp.sched = WarpSchedulerRegistry::instance().create(s.warp_scheduler);
  shared_pipe_.reset(s.max_warps, s.sub_partitions, s.shared.warp_cycles_per_wavefront,
                     s.shared.arbitration == 2 ? SharedPipe::Order::kSubPartitions : SharedPipe::Order::kRequests);
}

Sm::~Sm() = default;

void Sm::begin_kernel(const KernelLaunch& k) {
  kernel_ = k;
  sample_bra_ = sampler_ ? sampler_->loop_branch() : ~0u;
  sample_loop_ = k.program->sampling_loop().loop;
  record_warm_ = sample_bra_ != ~0u;
  residency_since_ = tick_to_cycle(sim_.now());
}

void Sm::end_kernel(uint64_t cycle) { note_residency(std::max(cycle, residency_since_)); }

uint64_t Sm::tick_to_cycle(Tick t) const {
  // The first cycle that starts at or after t (cycle_start rounds, so correct cycle_at's guess).
  uint64_t c = clock_.cycle_at(t);
  while (clock_.cycle_start(c) < t) ++c;
  while (c > 0 && clock_.cycle_start(c - 1) >= t) --c;
  return c;
}

void Sm::note_residency(uint64_t c) {
  if (c <= residency_since_) return;
  uint64_t dt = c - residency_since_;
  *ctr_[kWarpCyclesActive] += dt * resident_warps_;
  if (resident_warps_ > 0) *ctr_[kCyclesActive] += dt;
  residency_since_ = c;
}

void Sm::launch_cta(uint64_t linear_id, uint64_t start_cycle) {
  uint32_t slot = 0;
  while (ctas_[slot].used) ++slot;  // the scheduler never launches beyond ctas_per_sm
  CtaSlot& cta = ctas_[slot];
  const ir::Dim3 g = kernel_.grid;
  cta.used = true;
  cta.linear_id = linear_id;
  cta.ctaid = ir::Dim3{uint32_t(linear_id % g.x), uint32_t((linear_id / g.x) % g.y),
                       uint32_t(linear_id / (uint64_t(g.x) * g.y))};
  cta.warps_total = kernel_.warps_per_cta;
  cta.warps_done = cta.warps_exited = 0;
  cta.bar_arrived.fill(0);
  cta.bar_last.fill(0);
  cta.mbars.clear();
  cta.warps.clear();
  note_residency(tick_to_cycle(sim_.now()));
  ++resident_ctas_;
  resident_warps_ += kernel_.warps_per_cta;
  ++*ctr_[kCtasLaunched];
  *ctr_[kWarpsLaunched] += kernel_.warps_per_cta;
  if (sampler_) sampler_->on_cta_start(id_, slot);
  if (timeline_) timeline_->cta_begin(id_, slot, linear_id, start_cycle);
  uint16_t wi = 0;
  for (uint32_t k = 0; k < kernel_.warps_per_cta; ++k, ++wi) {
    while (warps_[wi].state != WarpState::kFree) ++wi;
    Warp& w = warps_[wi];
    w.exec.emplace(*kernel_.program, cta.ctaid, k);
    w.cta = slot;
    w.warp_in_cta = k;
    w.pending = 0;
    w.cp_groups.assign(1, 0);
    w.warm_iter = {-1, -1, -1};
    w.cp_base_seq = 0;
    w.wg_groups.clear();
    w.wg_open = 0;
    std::fill(w.reg_ready.begin(), w.reg_ready.end(), 0);
    std::fill(w.reg_mem.begin(), w.reg_mem.end(), 0);
    // Warps go to sub-partitions round-robin as hardware assigns warp slots.
    w.sp = uint8_t(next_sp_);
    next_sp_ = (next_sp_ + 1) % uint32_t(sps_.size());
    w.state = WarpState::kReady;
    w.ready_from = start_cycle;
    cta.warps.push_back(wi);
    sps_[w.sp].warps.push_back(wi);
    fetch(wi, start_cycle);
    if (w.state == WarpState::kReady) wake(w.sp, std::max(start_cycle, w.dep_ready));
  }
}

std::vector<WarmAccess>* Sm::warm_ring(Warp& w) {
  int64_t it = w.exec->loop_iterations(sample_loop_);
  if (it >= w.exec->loop_trip(sample_loop_)) return nullptr;  // not inside the sampling loop
  size_t k = size_t(it % 3);
  if (w.warm_iter[k] != it) {
    w.warm_iter[k] = it;
    w.warm_rec[k].clear();
  }
  return &w.warm_rec[k];
}

void Sm::record_warm(Warp& w) {
  std::vector<WarmAccess>* ring = warm_ring(w);
  if (!ring) return;
  std::vector<WarmAccess>& v = *ring;
  const ir::DynInst& in = w.inst;
  const bool write = in.op == ir::OpClass::kStGlobal || in.op == ir::OpClass::kAtomGlobal;
  const size_t first = v.size();
  const uint32_t bytes = std::max<uint32_t>(in.access_bytes, 1);
  for (uint32_t m = in.addr_active; m; m &= m - 1) {
    const uint64_t a = in.addr[std::countr_zero(m)];
    if (v.size() > first) {
      WarmAccess& last = v.back();
      if (a == last.first + last.bytes) {  // adjacent to the previous lane's: one range
        last.bytes += bytes;
        continue;
      }
      if (a >= last.first && a + bytes <= last.first + last.bytes) continue;  // inside it (a broadcast)
    }
    v.push_back(WarmAccess{a, bytes, write});
  }
}

size_t Sm::warm_streams(uint32_t slot, std::vector<WarmStream>& out) const {
  size_t unstreamed = 0;
  for (uint16_t wi : ctas_[slot].warps) {
    const Warp& w = warps_[wi];
    if (!w.exec) continue;
    int64_t cur = w.exec->loop_iterations(sample_loop_);
    const std::vector<WarmAccess>*b0 = nullptr, *b1 = nullptr;
    for (size_t k = 0; k < 3; ++k) {
      if (w.warm_iter[k] == cur - 2) b0 = &w.warm_rec[k];
      if (w.warm_iter[k] == cur - 1) b1 = &w.warm_rec[k];
    }
    if (!b0 || !b1 || b0->size() != b1->size() || b1->empty()) {
      unstreamed += !(b0 && b1 && b0->empty() && b1->empty());  // a warp with no global accesses has none to skip
      continue;
    }
    WarmStream s;
    s.base = *b1;
    s.sm = id_;
    for (size_t k = 0; k < b1->size(); ++k) s.step.push_back(int64_t((*b1)[k].first - (*b0)[k].first));
    out.push_back(std::move(s));
  }
  return unstreamed;
}

void Sm::report_iteration(const Warp& w0, uint64_t c) {
  Sampler::CtaProgress p;
  p.min = p.max = w0.exec->loop_iterations(sample_loop_);
  int64_t sum = 0, n = 0;
  for (uint16_t wi : ctas_[w0.cta].warps) {
    const Warp& w = warps_[wi];
    if (!w.exec) continue;
    int64_t it = w.exec->loop_iterations(sample_loop_);
    p.min = std::min(p.min, it);
    p.max = std::max(p.max, it);
    sum += it;
    ++n;
  }
  p.mean = double(sum) / double(std::max<int64_t>(n, 1));
  sampler_->on_iteration(id_, w0.cta, p, w0.exec->loop_trip(sample_loop_), c);
}

void Sm::skip_cta(uint32_t slot, uint32_t loop, int64_t n) {
  for (uint16_t wi : ctas_[slot].warps)
    if (warps_[wi].exec) warps_[wi].exec->skip_iterations(loop, n);
}

void Sm::handle_event(Tick now, uint32_t kind, uint64_t arg) {
  if (kind == kMemDone) {
    apply_mem_done(arg, now);
    return;
  }
  if (kind == kSharedPipe) {
    if (arg != shared_event_) return;  // superseded by a later request's reschedule
    shared_event_ = kNever;
    advance_shared_pipe(arg + 1);
    schedule_shared_pipe();
    return;
  }
  if (scheduled_cycle_ == kNever || clock_.cycle_start(scheduled_cycle_) != now) return;  // superseded
  uint64_t c = scheduled_cycle_;
  scheduled_cycle_ = kNever;
  in_step_ = true;
  const uint32_t n = uint32_t(sps_.size());
  uint32_t s = uint32_t(c % n);  // rotate which sub-partition reaches the SM-wide pipes first
  for (uint32_t k = 0; k < n; ++k, s = s + 1 == n ? 0 : s + 1) {
    if (sps_[s].next_cycle <= c) {
      sps_[s].next_cycle = kNever;
      step(s, c);
    }
  }
  in_step_ = false;
  uint64_t next = kNever;
  for (const auto& sp : sps_) next = std::min(next, sp.next_cycle);
  if (next != kNever) {
    scheduled_cycle_ = next;
    sim_.schedule(clock_.cycle_start(next), this, kStep);
  }
}

void Sm::wake(uint32_t s, uint64_t cycle) {
  SubPartition& sp = sps_[s];
  cycle = std::max(cycle, sp.stepped_through);
  if (cycle >= sp.next_cycle) return;
  sp.next_cycle = cycle;
  if (in_step_ || cycle >= scheduled_cycle_) return;  // the running step event schedules the minimum
  uint64_t now_cycle = tick_to_cycle(sim_.now());     // never schedule into the past
  if (cycle < now_cycle) sp.next_cycle = cycle = now_cycle;
  scheduled_cycle_ = cycle;
  sim_.schedule(clock_.cycle_start(cycle), this, kStep);
}

uint64_t Sm::earliest_issue(const Warp& w, const SubPartition& sp) const {
  uint64_t unit = sp.pipe_free[int(w.pipe)];
  if (w.pipe == Pipe::kInt && w.inst.int_mad && specs_.sm.int_on_fma)
    unit = std::min(unit, sp.pipe_free[int(Pipe::kFp32)]);
  uint64_t e = std::max({w.dep_ready, unit, w.hold_until});
  if (w.gate == Gate::kGlobal)
    e = std::max(e, l1_free_);
  else if (w.gate == Gate::kShared) {
    // The sub-partition's MIO queue holds `depth` requests waiting for the SM's shared pipe; with
    // the queue full, the next one issues when the depth-th latest of them starts.
    const uint32_t depth = specs_.sm.shared.mio_queue_depth;
    const std::deque<uint64_t>& q = sp.mio_starts;
    if ((specs_.sm.shared.arbitration != 0)) {
      // woken when one starts (depth 0: when the pipe has served everything)
      if (depth == 0 ? !shared_pipe_.idle() : shared_pipe_.waiting(w.sp) >= depth) e = kNever;
    } else if (depth == 0)
      e = std::max(e, shared_free_);
    else if (q.size() >= depth)
      e = std::max(e, q[q.size() - depth]);
  }
  return e;
}

void Sm::step(uint32_t s, uint64_t c) {
  SubPartition& sp = sps_[s];
  sp.stepped_through = c + 1;
  const uint32_t max_issue = specs_.sm.issue_per_cycle;
  uint32_t issued = 0;
  uint64_t earliest = kNever;
  bool last_in_loop = false;  // whether the last warp issued was in the sampling loop
  // Returns true when the sub-partition has issued all it may this cycle.
  auto try_warp = [&](uint16_t wi) {
    Warp& w = warps_[wi];
    if (w.state != WarpState::kReady || w.sp != s) return false;
    uint64_t e = earliest_issue(w, sp);
    if (e > c) {
      earliest = std::min(earliest, e);
      return false;
    }
    Counter::LoopWork scope(in_sampling_loop(w));
    last_in_loop = Counter::loop_work();
    account_stalls(w, c, e);
    sp.sched->issued(wi);
    issue(wi, c);
    return ++issued == max_issue;
  };
  uint16_t pref = sp.sched->preferred();
  bool full = pref != kNoWarp && try_warp(pref);
  size_t n = sp.warps.size(), first = full ? 0 : sp.sched->start(sp.warps);
  for (size_t i = 0; i < n && !full; ++i) {
    size_t k = first + i < n ? first + i : first + i - n;
    if (k >= sp.warps.size()) break;  // a warp exited during this step
    uint16_t wi = sp.warps[k];
    if (wi != pref) full = try_warp(wi);
  }
  if (timeline_) {
    timeline_->poll(c);
    if (issued) timeline_->issued(id_, s, c);
  }
  if (issued) {
    Counter::LoopWork scope(last_in_loop);
    ++*ctr_[kIssueActiveCycles];
    earliest = c + 1;  // look again next cycle (cheap: the scan stops at the first warp that can issue)
  }
  if (earliest != kNever) wake(s, earliest);
}

// Attributes the cycles since the warp could first have issued to a stall reason: waiting on a
// register (memory or fixed latency), then on a busy unit or pipe (`ready` = when both allowed
// issue), then on the scheduler choosing another warp.
void Sm::account_stalls(Warp& w, uint64_t c, uint64_t ready) {
  if (c <= w.ready_from) return;
  uint64_t wait = c - w.ready_from;
  uint64_t dep = w.dep_ready > w.ready_from ? std::min(w.dep_ready - w.ready_from, wait) : 0;
  *ctr_[w.dep_mem ? kStallMemory : kStallScoreboard] += dep;
  uint64_t from = w.ready_from + dep;
  uint64_t unit = ready > from ? std::min(ready - from, wait - dep) : 0;
  *ctr_[kStallUnitBusy] += unit;
  *ctr_[kStallNotSelected] += wait - dep - unit;
  if (timeline_) {
    timeline_->stalled(id_, w.sp, w.dep_mem ? StallKind::kMemory : StallKind::kDependency, w.ready_from, from);
    timeline_->stalled(id_, w.sp, StallKind::kUnitBusy, from, from + unit);
    timeline_->stalled(id_, w.sp, StallKind::kNotSelected, from + unit, c);
  }
}

void Sm::issue(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  const ir::DynInst& in = w.inst;
  ++*ctr_[kInstExecuted];
  ++*ctr_[kInstClassBase + int(in.op)];
  *ctr_[kThreadInstExecuted] += uint64_t(std::popcount(in.active));
  *ctr_[kFlops] += in.flops;
  sim_.note_progress();
  last_activity_ = std::max(last_activity_, c);
  if (in.static_id == sample_bra_ && w.warp_in_cta == 0) report_iteration(w, c);
  SubPartition& sp = sps_[w.sp];
  Pipe p = w.pipe;
  if (p != Pipe::kTensor) {
    // an integer multiply-add (IMAD / IMUL) takes the FMA pipe when the INT pipe is still busy
    // (sm.int_on_fma); IADD3, LOP3, SHF, ISETP and the rest only run on the INT pipe. There it runs at
    // the integer rate (the INT pipe's lanes): Hopper's IMAD uses only the FMA-heavy half of the FMA
    // datapath, 64 multiply-adds per SM per clock as on Ampere [NCU-pipes, CUDA-tput]
    Pipe unit = p == Pipe::kInt && in.int_mad && specs_.sm.int_on_fma && sp.pipe_free[int(p)] > c ? Pipe::kFp32 : p;
    uint32_t ii = ii_[int(p)];
    if (w.gate == Gate::kShared && specs_.sm.shared.mio_issue_per_warp)
      w.hold_until = c + ii;  // the warp's stall count; the sub-partition's LSU stays open
    else
      sp.pipe_free[int(unit)] = c + ii;
    *ctr_[kPipeBusyBase + int(unit)] += ii;
  }
  w.ready_from = c + 1;
  switch (p) {
    case Pipe::kTensor:
      exec_tensor(w, c);
      break;
    case Pipe::kLsu:
      if (w.gate == Gate::kGlobal)
        exec_global(wi, c);
      else
        exec_shared(w, c);
      break;
    case Pipe::kNone:
      exec_sync(wi, c);
      break;
    default:
      exec_alu(w, c);
      break;
  }
  if (w.state == WarpState::kFree || w.state == WarpState::kExited) return;
  fetch(wi, c + 1);
}

void Sm::ensure_regs(Warp& w, uint16_t reg) {
  if (reg >= w.reg_ready.size()) {
    w.reg_ready.resize(size_t(reg) + 1, 0);
    w.reg_mem.resize(size_t(reg) + 1, 0);
  }
}

void Sm::compute_deps(Warp& w) {
  uint64_t r = 0;
  bool mem = false;
  auto look = [&](uint16_t reg) {
    if (reg == ir::kNoReg) return;
    ensure_regs(w, reg);
    if (w.reg_ready[reg] > r) {
      r = w.reg_ready[reg];
      mem = w.reg_mem[reg] != 0;
    }
  };
  for (int i = 0; i < w.inst.n_src; ++i) look(w.inst.src[i]);
  for (int i = 0; i < w.inst.n_dst; ++i) look(w.inst.dst[i]);
  w.dep_ready = r;
  w.dep_mem = mem;
}

// Fetches the warp's next instruction from its executor (the functional model runs here).
void Sm::fetch(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  if (!w.exec->next(w.inst)) {
    warp_exit(wi, c);
    return;
  }
  ir::OpClass op = w.inst.op;
  w.pipe = pipe_of(op);
  w.gate = Gate::kNone;
  if (op == ir::OpClass::kLdGlobal || op == ir::OpClass::kStGlobal || op == ir::OpClass::kAtomGlobal ||
      op == ir::OpClass::kCpAsync)
    w.gate = Gate::kGlobal;
  else if (w.pipe == Pipe::kLsu)
    w.gate = Gate::kShared;
  compute_deps(w);
}

void Sm::warp_exit(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  w.state = WarpState::kExited;
  auto& list = sps_[w.sp].warps;
  list.erase(std::find(list.begin(), list.end(), wi));
  ++ctas_[w.cta].warps_exited;
  last_activity_ = std::max(last_activity_, c);
  if (w.pending == 0) warp_done(wi, c);
}

// The warp has exited and nothing it waits for is outstanding: its slot is free. When the last
// warp of a CTA is done, the CTA's resources are released (stores may still be draining).
void Sm::warp_done(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  note_residency(std::max(c, residency_since_));
  w.state = WarpState::kFree;
  w.exec.reset();
  --resident_warps_;
  CtaSlot& cta = ctas_[w.cta];
  if (++cta.warps_done < cta.warps_total) return;
  cta.used = false;
  --resident_ctas_;
  if (sampler_) sampler_->on_cta_end(id_, w.cta);
  if (timeline_) timeline_->cta_end(id_, w.cta, c);
  listener_.on_cta_exit(id_, c);
}

}  // namespace gtsim::gpu
