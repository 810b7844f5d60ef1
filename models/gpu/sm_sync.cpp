// The SM's synchronization: bar.sync, mbarriers (init / arrive / wait on a phase parity),
// cp.async commit and wait groups; and the diagnostics for barriers under divergence and for
// warps left waiting when nothing else can happen (deadlock).
#include <algorithm>
#include <bit>
#include <sstream>

#include "models/gpu/sm.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {

void Sm::exec_sync(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  const ir::DynInst& in = w.inst;
  switch (in.op) {
    case ir::OpClass::kCpAsyncCommit:
      w.cp_groups.push_back(0);  // the open group becomes committed; a new one opens
      while (w.cp_groups.size() > 1 && w.cp_groups.front() == 0) {
        w.cp_groups.pop_front();
        ++w.cp_base_seq;
      }
      break;
    case ir::OpClass::kCpAsyncWait:
      w.wait_arg = in.imm;
      if (cp_wait_satisfied(w)) break;
      w.state = WarpState::kCpWait;
      w.wait_since = c;
      w.wait_static_id = in.static_id;
      break;
    case ir::OpClass::kBarSync:
      bar_sync(wi, c);
      break;
    case ir::OpClass::kMbarInit:
    case ir::OpClass::kMbarArrive:
    case ir::OpClass::kMbarWait:
      mbar_op(wi, c);
      break;
    case ir::OpClass::kTmaLoad:
      tma_load(wi, c);
      break;
    case ir::OpClass::kWgmmaCommit:
    case ir::OpClass::kWgmmaWait:
      wgmma_group(w, c);
      break;
    default:
      break;
  }
}

// cp.async.wait_group N: every committed group but the N most recent has landed. Completed
// groups at the front are popped eagerly, so the front of the committed ones is incomplete.
bool Sm::cp_wait_satisfied(const Warp& w) const {
  size_t committed_pending = w.cp_groups.size() - 1;
  return committed_pending <= size_t(std::max(w.wait_arg, 0));
}

// bar.sync: every warp of the CTA must arrive; a warp that exited never does (deadlock report). The
// SM's barrier unit counts one arrival per sm.barrier.cycles_per_warp cycles and releases the CTA's
// warps sm.barrier.latency_cycles after the last one is counted.
void Sm::bar_sync(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  const ir::DynInst& in = w.inst;
  if (in.active != in.live) fail_divergent_barrier(w, c);
  if (in.imm < 0 || in.imm >= 16)
    throw SimulationError(warp_place(w, in.static_id) + ": barrier id " + std::to_string(in.imm) +
                          " out of range 0..15");
  CtaSlot& cta = ctas_[w.cta];
  w.state = WarpState::kBarrier;
  w.wait_since = c;
  w.wait_static_id = in.static_id;
  w.wait_arg = in.imm;
  const BarrierSpecs& b = specs_.sm.barrier;
  const uint64_t counted = std::max(c, barrier_free_) + b.cycles_per_warp;
  barrier_free_ = counted;
  const size_t id = size_t(in.imm);
  cta.bar_last[id] = std::max(cta.bar_last[id], counted);
  if (++cta.bar_arrived[id] < cta.warps_total) return;
  const uint64_t at = std::max(c + 1, cta.bar_last[id] + b.latency_cycles);
  cta.bar_arrived[id] = 0;
  cta.bar_last[id] = 0;
  for (uint16_t x : cta.warps)
    if (warps_[x].state == WarpState::kBarrier && warps_[x].wait_arg == in.imm) release(x, at, kStallBarrier);
}

// mbarriers live in the CTA's shared memory (addr2[0]); arrivals count threads, as in PTX.
void Sm::mbar_op(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  const ir::DynInst& in = w.inst;
  CtaSlot& cta = ctas_[w.cta];
  uint64_t addr = in.addr2[0];
  if (in.active == 0) return;  // predicated off: no lane initializes, arrives or waits
  auto it = std::find_if(cta.mbars.begin(), cta.mbars.end(), [&](const MBarrier& m) { return m.addr == addr; });
  if (in.op == ir::OpClass::kMbarInit) {
    if (it == cta.mbars.end()) it = cta.mbars.insert(cta.mbars.end(), MBarrier{addr, 0, 0, 0});
    it->expected = it->pending = std::max(in.imm, 1);
    it->phase = 0;
    return;
  }
  if (it == cta.mbars.end())
    throw SimulationError(warp_place(w, in.static_id) + ": mbarrier at shared offset " + std::to_string(addr) +
                          " used before mbarrier.init");
  if (in.op == ir::OpClass::kMbarArrive) {
    mbar_arrive(cta, *it, std::popcount(in.active), c);
    return;
  }
  // mbarrier.try_wait.parity P: done once the phase with parity P has completed.
  if ((it->phase & 1) != uint64_t(in.imm & 1)) return;
  w.state = WarpState::kMbarWait;
  w.wait_since = c;
  w.wait_static_id = in.static_id;
  w.wait_arg = in.imm & 1;
  w.wait_addr = addr;
}

void Sm::mbar_arrive(CtaSlot& cta, MBarrier& m, int64_t n, uint64_t c) {
  m.pending -= n;
  if (m.pending > 0) return;
  ++m.phase;
  m.pending = m.expected;
  for (uint16_t x : cta.warps) {
    Warp& o = warps_[x];
    if (o.state == WarpState::kMbarWait && o.wait_addr == m.addr && (m.phase & 1) != uint64_t(o.wait_arg))
      release(x, c + 1, kStallBarrier);
  }
}

Sm::MBarrier* Sm::find_mbar(CtaSlot& cta, uint64_t addr) {
  auto it = std::find_if(cta.mbars.begin(), cta.mbars.end(), [&](const MBarrier& m) { return m.addr == addr; });
  return it == cta.mbars.end() ? nullptr : &*it;
}

void Sm::release(uint16_t wi, uint64_t c, SmCounter reason) {
  Warp& w = warps_[wi];
  *ctr_[reason] += c > w.wait_since ? c - w.wait_since : 0;
  if (timeline_)
    timeline_->stalled(id_, w.sp, reason == kStallBarrier ? StallKind::kBarrier : StallKind::kMemory, w.wait_since, c);
  w.state = WarpState::kReady;
  w.ready_from = c;
  w.hold_until = c;
  wake(w.sp, std::max(c, w.dep_ready));
}

std::string Sm::warp_place(const Warp& w, uint32_t static_id) const {
  const CtaSlot& cta = ctas_[w.cta];
  std::ostringstream os;
  os << "CTA (" << cta.ctaid.x << "," << cta.ctaid.y << "," << cta.ctaid.z << ") warp " << w.warp_in_cta << " on SM "
     << id_;
  if (kernel_.program && static_id < kernel_.program->instruction_count()) {
    const ir::StaticInstInfo& si = kernel_.program->instruction(static_id);
    os << " at `" << si.text << "` (" << si.loc.file << ":" << si.loc.line << ":" << si.loc.col << ")";
  }
  return os.str();
}

void Sm::fail_divergent_barrier(const Warp& w, uint64_t c) const {
  std::ostringstream os;
  os << "barrier under divergence: " << warp_place(w, w.inst.static_id) << " reached bar.sync with active lanes 0x"
     << std::hex << w.inst.active << " of live lanes 0x" << w.inst.live << std::dec << " at cycle " << c << " ("
     << double(clock_.cycle_start(c)) / double(kTicksPerNs) << " ns of simulated time); every live lane of a warp "
     << "must reach bar.sync together";
  throw SimulationError(os.str());
}

void Sm::describe_waiting(std::string& out) const {
  for (const Warp& w : warps_) {
    if (w.state == WarpState::kFree) continue;
    const CtaSlot& cta = ctas_[w.cta];
    std::string what;
    switch (w.state) {
      case WarpState::kBarrier:
        what = "waits at bar.sync " + std::to_string(w.wait_arg) + " (" +
               std::to_string(cta.bar_arrived[size_t(w.wait_arg)]) + " of " + std::to_string(cta.warps_total) +
               " warps arrived, " + std::to_string(cta.warps_exited) + " exited)";
        break;
      case WarpState::kMbarWait:
        what = "waits on the mbarrier at shared offset " + std::to_string(w.wait_addr) + " for phase parity " +
               std::to_string(w.wait_arg);
        break;
      case WarpState::kCpWait:
        what = "waits at cp.async.wait_group " + std::to_string(w.wait_arg) + " with " +
               std::to_string(w.cp_groups.size() - 1) + " committed groups outstanding";
        break;
      case WarpState::kExited:
        what = "exited, " + std::to_string(w.pending) + " memory results outstanding";
        break;
      default:
        what = "ready to issue (waiting on " + std::to_string(w.pending) + " memory results)";
        break;
    }
    uint32_t at = w.state == WarpState::kReady || w.state == WarpState::kExited ? w.inst.static_id : w.wait_static_id;
    out += "  " + warp_place(w, at) + ": " + what + "\n";
  }
}

}  // namespace gtsim::gpu
