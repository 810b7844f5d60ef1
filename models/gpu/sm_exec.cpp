// The SM's execution stage: ALU pipes, tensor cores, the LSU towards global memory (through the
// memory system) and shared memory (the banked pipe), and memory completions (writeback).
#include <algorithm>
#include <bit>
#include <cmath>

#include "models/gpu/shared_banks.hpp"
#include "models/gpu/sm.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {

void Sm::exec_alu(Warp& w, uint64_t c) {
  uint64_t ready = c + latency_[int(w.pipe)];
  for (int i = 0; i < w.inst.n_dst; ++i) {
    uint16_t d = w.inst.dst[i];
    if (d == ir::kNoReg) continue;
    ensure_regs(w, d);
    w.reg_ready[d] = ready;
    w.reg_mem[d] = 0;
  }
}

// An mma.sync occupies the sub-partition's tensor core for flops / (rate per sub-partition)
// cycles (whole cycles, the remainder carried); its accumulators are ready `latency` cycles after
// issue (or when the core is done).
void Sm::exec_tensor(Warp& w, uint64_t c) {
  const ir::DynInst& in = w.inst;
  const auto& table = in.op == ir::OpClass::kWgmma ? wgmma_rate_ : mma_rate_;
  double rate = table[size_t(in.mma.ab)];
  if (rate <= 0)
    throw SimulationError(warp_place(w, in.static_id) + ": this machine (" + specs_.name + ") has no " +
                          (in.op == ir::OpClass::kWgmma ? "wgmma" : "mma.sync") + " rate for dtype " +
                          std::string(ir::dtype_name(in.mma.ab)) + " (sm.tensor in the config)");
  // A warpgroup's wgmma is issued by each of its 4 warps, one per sub-partition: each warp's share is a
  // quarter of the instruction's 2 * 64 * N * K.
  uint64_t flops = in.op == ir::OpClass::kWgmma ? in.flops : in.mma.flops() ? in.mma.flops() : in.flops;
  // Whole cycles per mma, with the fraction carried to the next one, so that a stream of mma runs
  // at the configured rate on average (a rate of 6.7 cycles per mma costs 7, 7, 6, 7, ...).
  SubPartition& sp = sps_[w.sp];
  double exact = double(flops) / rate + sp.tensor_carry;
  uint64_t occupancy = std::max<uint64_t>(1, uint64_t(std::floor(exact)));
  sp.tensor_carry = std::max(0.0, exact - double(occupancy));
  sp.pipe_free[int(Pipe::kTensor)] = c + occupancy;
  *ctr_[kPipeBusyBase + int(Pipe::kTensor)] += occupancy;
  uint64_t ready = c + std::max<uint64_t>(latency_[int(Pipe::kTensor)], occupancy);
  if (in.op == ir::OpClass::kWgmma) w.wg_open = std::max(w.wg_open, ready);
  for (int i = 0; i < in.n_dst; ++i) {
    uint16_t d = in.dst[i];
    if (d == ir::kNoReg) continue;
    ensure_regs(w, d);
    w.reg_ready[d] = ready;
    w.reg_mem[d] = 0;
  }
}

// Global loads, stores, atomics and cp.async go to the memory system. The L1 tag pipe accepts one
// line request per cycle, so an uncoalesced instruction holds it for as many cycles as it has
// requests. Loads keep their destinations pending until on_mem_complete.
void Sm::exec_global(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  const ir::DynInst& in = w.inst;
  uint64_t token = kTokStore;
  bool has_result = in.n_dst > 0 && (in.op == ir::OpClass::kLdGlobal || in.op == ir::OpClass::kAtomGlobal);
  if (has_result) {
    uint64_t d0 = in.dst[0], d1 = in.n_dst > 1 ? in.dst[1] : ir::kNoReg;
    for (int i = 0; i < in.n_dst; ++i) {
      ensure_regs(w, in.dst[i]);
      w.reg_ready[in.dst[i]] = kNever;
      w.reg_mem[in.dst[i]] = 1;
    }
    ++w.pending;
    token = kTokLoad | uint64_t(wi) << 4 | d0 << 20 | d1 << 36;
  } else if (in.op == ir::OpClass::kCpAsync) {
    uint64_t seq = w.cp_base_seq + w.cp_groups.size() - 1;  // the open group
    ++w.cp_groups.back();
    ++w.pending;
    token = kTokCp | uint64_t(wi) << 4 | seq << 20;
  } else {
    ++outstanding_stores_;
  }
  mem::IssueInfo info = memory_.issue(id_, in, clock_.cycle_start(c), this, token);
  if (record_warm_) record_warm(w);
  uint64_t busy = std::max<uint32_t>(info.requests, 1);
  l1_free_ = c + busy;
  *ctr_[kL1PipeBusy] += busy;
  if (in.op == ir::OpClass::kCpAsync && in.cache_global) {
    // A cp.async.ca passes its data through the L1's data pipe, which shared memory shares: read
    // from the L1 line (one wavefront per 128 bytes of sectors), then written to shared memory (the
    // shared store's wavefronts under the bank rules). A cp.async.cg bypasses L1: the fill path
    // writes it. Evidence, validation/data/h200/b7/ncu_gemm_align.csv: gemm_tiled at 1028^3 (8-byte
    // .ca copies) passes 254 more data-pipe wavefronts per tile fill of 64 copies (4 per copy, 0.7
    // of them bank conflicts) than its ldmatrix; at 1032^3 (16-byte .cg) 51 per fill of 32 copies.
    SharedCost wr = ir::shared_cost(in, specs_.sm.shared.banks, specs_.sm.shared.bank_bytes, in.addr2);
    const uint32_t wavefront_bytes = specs_.sm.shared.banks * specs_.sm.shared.bank_bytes;
    const uint32_t bytes = info.sectors * 32;  // IssueInfo::sectors are 32-byte sectors
    const uint32_t reads = (bytes + wavefront_bytes - 1) / wavefront_bytes;
    const SharedCost fill{reads + wr.wavefronts, reads + wr.ideal};
    if ((specs_.sm.shared.arbitration != 0)) {
      count_shared(fill);
      queue_shared(wi, c, fill.wavefronts, false);
    } else {
      reserve_shared_pipe(c, fill);
    }
  }
  ++*ctr_[kGlobalInsts];
  *ctr_[kGlobalRequests] += info.requests;
  *ctr_[kGlobalSectors] += info.sectors;
}

void Sm::count_shared(const SharedCost& cost) {
  *ctr_[kSharedWavefronts] += cost.wavefronts;
  *ctr_[kSharedIdealWavefronts] += cost.ideal;
  *ctr_[kSharedPipeBusy] += cost.wavefronts;
}

// The SM's shared pipe (the L1 data pipe) serves `cost.wavefronts` from the first free cycle at or
// after c; returns that cycle (sm.shared.arbitration fifo).
uint64_t Sm::reserve_shared_pipe(uint64_t c, const SharedCost& cost) {
  const uint64_t start = std::max(c, shared_free_);
  shared_free_ = start + cost.wavefronts;
  count_shared(cost);
  return start;
}

// sm.shared.arbitration round_robin or sub_partition: the request waits in the arbiter (shared_pipe.hpp); a load's
// destinations are pending until its last wavefront is served, then ready `latency` cycles later.
void Sm::queue_shared(uint16_t wi, uint64_t c, uint32_t wavefronts, bool result) {
  advance_shared_pipe(c);
  Warp& w = warps_[wi];
  SharedPipe::Request r;
  r.warp = wi;
  r.sp = w.sp;
  r.wavefronts = wavefronts;
  if (result) {
    for (int i = 0; i < w.inst.n_dst && r.n_dst < 2; ++i) {
      const uint16_t d = w.inst.dst[i];
      if (d == ir::kNoReg) continue;
      ensure_regs(w, d);
      w.reg_ready[d] = kNever;
      w.reg_mem[d] = 0;
      r.dst[r.n_dst++] = d;
    }
    if (r.n_dst > 0) ++w.pending;
  }
  shared_pipe_.enqueue(r, c);
  const uint32_t depth = specs_.sm.shared.mio_queue_depth;
  if (depth == 0)  // no queue: every sub-partition waits until the pipe has served everything
    mio_blocked_ = (1u << sps_.size()) - 1;
  else if (shared_pipe_.waiting(w.sp) >= depth)
    mio_blocked_ |= 1u << w.sp;
  schedule_shared_pipe();
}

void Sm::advance_shared_pipe(uint64_t until) {
  const uint64_t latency = specs_.sm.shared.latency_cycles;
  shared_pipe_.advance(until, [&](const SharedPipe::Request& r, uint64_t last) {
    if (r.n_dst == 0) return;
    Warp& w = warps_[r.warp];
    const uint64_t ready = last + latency;
    for (int i = 0; i < r.n_dst; ++i) w.reg_ready[r.dst[i]] = ready;
    --w.pending;
    if (w.state == WarpState::kExited) {
      if (w.pending == 0) warp_done(r.warp, ready);
      return;
    }
    compute_deps(w);
    if (w.state == WarpState::kReady) wake(w.sp, std::max(ready, w.dep_ready));
  });
  const uint32_t depth = specs_.sm.shared.mio_queue_depth;
  for (uint32_t s = 0; mio_blocked_ != 0 && s < sps_.size(); ++s)
    if ((mio_blocked_ >> s & 1u) && (depth == 0 ? shared_pipe_.idle() : shared_pipe_.waiting(uint8_t(s)) < depth)) {
      mio_blocked_ &= ~(1u << s);
      wake(s, until > 0 ? until - 1 : 0);
    }
}

// One pending event, at the cycle the arbiter next finishes a request (or, with a full MIO queue,
// starts one) if nothing else arrives; a new request reschedules it.
void Sm::schedule_shared_pipe() {
  const uint64_t e = shared_pipe_.next_event(mio_blocked_ != 0);
  if (e == SharedPipe::kNone || e == shared_event_) return;
  shared_event_ = e;
  sim_.schedule(clock_.cycle_start(e), this, kSharedPipe, e);
}

// Shared memory: one wavefront per cycle through the SM's shared pipe, requests in issue order
// (waiting in their sub-partition's MIO queue, sm.shared.mio_queue_depth); a load's result is ready
// `latency` cycles after its last wavefront starts. An ldmatrix also holds its sub-partition's
// tensor pipe while its registers are written back (sm.tensor.ldmatrix_writeback_cycles_per_reg).
void Sm::exec_shared(Warp& w, uint64_t c) {
  const ir::DynInst& in = w.inst;
  SharedCost cost = shared_wavefronts(in, specs_.sm.shared.banks, specs_.sm.shared.bank_bytes);
  ++*ctr_[kSharedRequests];
  bool store = in.op == ir::OpClass::kStShared || in.op == ir::OpClass::kStMatrix;
  ++*ctr_[store ? kSharedStores : kSharedLoads];
  if (in.op == ir::OpClass::kLdMatrix && ldmatrix_wb_per_reg_ > 0) {
    // An ldmatrix.xN writes N registers per lane back through the path the sub-partition's tensor
    // core also needs: the next mma.sync of that sub-partition waits for the writeback.
    int regs = std::max(1, std::popcount(in.addr_active) / 8);  // .xN: 8 row addresses and one register per matrix
    auto wb = uint64_t(std::llround(double(regs) * ldmatrix_wb_per_reg_));
    uint64_t& tensor_free = sps_[w.sp].pipe_free[int(Pipe::kTensor)];
    tensor_free = std::max(tensor_free, c) + wb;
    *ctr_[kTensorWritebackCycles] += wb;
  }
  if ((specs_.sm.shared.arbitration != 0)) {
    count_shared(cost);
    queue_shared(uint16_t(&w - warps_.data()), c, cost.wavefronts, true);
    return;
  }
  const uint64_t start = reserve_shared_pipe(c, cost);
  if (specs_.sm.shared.mio_queue_depth > 0) {
    std::deque<uint64_t>& q = sps_[w.sp].mio_starts;
    while (!q.empty() && q.front() <= c) q.pop_front();
    q.push_back(start);
  }
  uint64_t ready = start + cost.wavefronts - 1 + specs_.sm.shared.latency_cycles;
  for (int i = 0; i < in.n_dst; ++i) {
    uint16_t d = in.dst[i];
    if (d == ir::kNoReg) continue;
    ensure_regs(w, d);
    w.reg_ready[d] = ready;
    w.reg_mem[d] = 0;
  }
}

void Sm::on_mem_complete(uint64_t token, Tick when) {
  // The memory system may answer from inside issue() (a server model knows the completion time
  // at once) or from its own event: either way the result lands at `when`.
  if (when > sim_.now()) {
    sim_.schedule(when, this, kMemDone, token);
    return;
  }
  apply_mem_done(token, when);
}

void Sm::apply_mem_done(uint64_t token, Tick when) {
  uint64_t c = tick_to_cycle(when);
  last_activity_ = std::max(last_activity_, c);
  uint64_t kind = token & 0xf;
  if (kind == kTokStore) {
    --outstanding_stores_;
    return;
  }
  uint16_t wi = uint16_t(token >> 4);
  Warp& w = warps_[wi];
  Counter::LoopWork scope(w.exec && in_sampling_loop(w));
  if (kind == kTokLoad) {
    for (uint64_t d : {(token >> 20) & 0xffff, (token >> 36) & 0xffff})
      if (d != ir::kNoReg) w.reg_ready[d] = c;
  } else if (kind == kTokTma) {
    tma_request_done(wi, token >> 20, c);
  } else {
    uint64_t idx = (token >> 20) - w.cp_base_seq;
    --w.cp_groups[idx];
    while (w.cp_groups.size() > 1 && w.cp_groups.front() == 0) {
      w.cp_groups.pop_front();
      ++w.cp_base_seq;
    }
  }
  --w.pending;
  if (w.state == WarpState::kExited) {
    if (w.pending == 0) warp_done(wi, c);
    return;
  }
  compute_deps(w);
  if (w.state == WarpState::kCpWait && cp_wait_satisfied(w))
    release(wi, c, kStallMemory);
  else if (w.state == WarpState::kReady)
    wake(w.sp, std::max(c, w.dep_ready));
}

}  // namespace gtsim::gpu
