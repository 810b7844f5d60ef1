// GpuMemorySystem::create, instruction issue, the L1 and the crossbar (the L2 and HBM side is in
// l2_path.cpp, the counters in mem_metrics.cpp).
#include <algorithm>
#include <bit>

#include "models/mem/memory_system_impl.hpp"

namespace gtsim::mem {

std::unique_ptr<GpuMemorySystem> GpuMemorySystem::create(Simulation& sim, StatGroup& parent, const ConfigNode& root,
                                                         uint32_t sms) {
  MemSpecs specs = MemSpecs::parse(root);
  if (const ConfigNode* clocks = root.find("clocks")) clocks->param<double>("mem_mhz").optional();
  if (sms == 0) root.fail("the memory system needs at least one SM");
  return std::make_unique<MemorySystemImpl>(sim, parent, specs, sms);
}

MemorySystemImpl::MemorySystemImpl(Simulation& sim, StatGroup& parent, const MemSpecs& specs, uint32_t sms)
    : Component(sim, parent, "mem", "mem"),
      specs_(specs),
      clock_(specs.sm_mhz),
      coalescer_(specs.l1.line_bytes, specs.l1.sector_bytes),
      ports_(sms),
      c_(stats()) {
  sector_shift_ = uint32_t(std::countr_zero(specs_.l1.sector_bytes));
  sectors_per_line_ = specs_.l1.line_bytes / specs_.l1.sector_bytes;
  slice_lat_ =
      clock_.ticks(uint64_t(specs_.l2.hit_latency_cycles - specs_.l1.latency_cycles - 2 * specs_.noc.latency_cycles));
  tag_cycles_per_byte_ = 1.0 / specs_.l1.bytes_per_cycle;
  set_sm_clock(specs_.sm_mhz);
  for (uint32_t i = 0; i < sms; ++i) {
    SmPort& p = ports_[i];
    p.partition = uint32_t(uint64_t(i) * specs_.l2.partitions / sms);  // GPC halves: SMs in order
    if (specs_.noc.sms_per_group > 0) p.group = i / specs_.noc.sms_per_group;
    p.mshrs.resize(specs_.l1.mshrs);
  }
  build_l2();
  hbm_ = make_hbm_model(specs_.hbm, stats().child("hbm"));
  configure_l1(specs_.l1.unified_bytes);
  snapshot_ = snapshot_counters();
}

void MemorySystemImpl::set_sm_clock(double mhz) {
  ClockDomain sm(mhz);
  gpc_clock_ = sm;
  l1_lat_ = sm.ticks(uint64_t(specs_.l1.latency_cycles));
  noc_lat_ = sm.ticks(uint64_t(specs_.noc.latency_cycles));
  far_extra_ = sm.ticks(uint64_t(specs_.l2.far_extra_cycles));
  tag_cost_ = sm.ticks(1.0 / specs_.l1.requests_per_cycle);
  double noc_rate = specs_.noc.bytes_per_cycle_per_sm * mhz / 1000.0;  // bytes per ns
  const double store_rate = specs_.noc.store_bytes_per_cycle_per_sm * mhz / 1000.0;
  for (SmPort& p : ports_) {
    p.noc_up.set_rate(noc_rate);
    p.noc_down.set_rate(noc_rate);
    if (store_rate > 0) p.store_out.set_rate(store_rate);
  }
  const uint32_t per = specs_.noc.sms_per_group;
  group_down_.resize(per > 0 ? (ports_.size() + per - 1) / per : 0);
  for (BandwidthServer& g : group_down_) g.set_rate(specs_.noc.bytes_per_cycle_per_group * mhz / 1000.0);
}

void MemorySystemImpl::configure_l1(uint32_t bytes) {
  uint64_t lines = bytes / specs_.l1.line_bytes;
  uint32_t assoc = specs_.l1.assoc;
  uint64_t sets = lines / assoc;
  if (sets == 0 && lines > 0) {  // smaller than one set: one set of what fits
    sets = 1;
    assoc = uint32_t(lines);
  }
  for (SmPort& p : ports_) {
    p.l1.configure(sets, assoc, true);
    p.free_mshrs.clear();
    for (uint32_t m = uint32_t(p.mshrs.size()); m-- > 0;) {
      p.mshrs[m] = L1Mshr{};
      p.free_mshrs.push_back(m);
    }
  }
}

void MemorySystemImpl::begin_kernel(uint32_t l1_bytes_per_sm) {
  if (requests_in_flight() != 0)
    throw SimulationError("mem: begin_kernel with " + std::to_string(requests_in_flight()) + " requests in flight");
  configure_l1(std::min(l1_bytes_per_sm, specs_.l1.unified_bytes));
  kernel_start_ = sim().now();
  snapshot_ = snapshot_counters();
}

void MemorySystemImpl::end_kernel() {
  for (SmPort& p : ports_) p.l1.invalidate_all();
}

uint32_t MemorySystemImpl::alloc_req() {
  if (free_reqs_.empty()) {
    reqs_.emplace_back();
    return uint32_t(reqs_.size() - 1);
  }
  uint32_t r = free_reqs_.back();
  free_reqs_.pop_back();
  return r;
}

IssueInfo MemorySystemImpl::issue(uint32_t sm, const ir::DynInst& inst, Tick now, MemResponder* responder,
                                  uint64_t token) {
  now = std::max(now, sim().now());
  const std::vector<LineRequest>& lines = coalescer_.coalesce(inst);
  uint32_t slot = free_inst_;
  if (slot == kNil) {
    insts_.emplace_back();
    slot = uint32_t(insts_.size() - 1);
  } else {
    free_inst_ = insts_[slot].next_free;
  }
  insts_[slot] = InstSlot{responder, token, uint32_t(lines.size()), kNil, now};
  IssueInfo info{uint32_t(lines.size()), coalescer_.sectors()};
  if (lines.empty()) {
    sim().schedule(now, this, kInstDone, slot);
    return info;
  }
  ReqKind kind = ReqKind::kLoad;
  switch (inst.op) {
    case ir::OpClass::kStGlobal:
      kind = ReqKind::kStore;
      c_.st_requests += info.requests;
      c_.st_sectors += info.sectors;
      break;
    case ir::OpClass::kAtomGlobal:
      kind = ReqKind::kAtomic;
      c_.atom_requests += info.requests;
      c_.atom_sectors += info.sectors;
      break;
    default:
      kind = inst.cache_global ? ReqKind::kLoad : ReqKind::kLoadBypass;
      c_.ld_requests += info.requests;
      c_.ld_sectors += info.sectors;
  }
  SmPort& p = ports_[sm];
  for (const LineRequest& lr : lines) {
    uint32_t r = alloc_req();
    MemRequest& q = reqs_[r];
    q = MemRequest{};
    q.line = lr.line;
    q.inst = slot;
    q.mask = lr.sector_mask;
    q.fetch = lr.sector_mask;
    q.sm = uint16_t(sm);
    q.kind = kind;
    q.bytes = lr.bytes;
    q.loop_work = Counter::loop_work();
    // The L1 tag pipe takes one request per cycle (or its data at bytes_per_cycle, if slower).
    // The lookup is resolved here, in issue order; its timing is carried by `not_before` and the
    // crossbar reservation, so an L1 hit costs no event of its own.
    Tick start = std::max(now, p.tag_free);
    uint32_t bytes = uint32_t(std::popcount(lr.sector_mask)) << sector_shift_;
    p.tag_free = start + std::max(tag_cost_, gpc_clock_.ticks(double(bytes) * tag_cycles_per_byte_));
    q.not_before = kind == ReqKind::kStore ? start : start + l1_lat_;
    l1_lookup(r, q.not_before);
  }
  return info;
}

void MemorySystemImpl::handle_event(Tick now, uint32_t kind, uint64_t arg) {
  uint32_t r = uint32_t(arg);
  // a request's work is its instruction's: loop work or not (sampled simulation's rates)
  Counter::LoopWork scope(kind != kInstDone && reqs_[r].loop_work);
  switch (kind) {
    case kL2Arrive:
      l2_arrive(r, now);
      break;
    case kHbmDone:
      respond(r, now);
      break;
    case kSmArrive:
      if (reqs_[r].mshr != kNil)
        l1_fill(r, now);
      else
        complete(r, now);
      break;
    case kInstDone:
      finish_inst(r, now);
      break;  // an instruction with no active lane
    default:
      break;
  }
}

void MemorySystemImpl::finish_inst(uint32_t slot, Tick when) {
  MemResponder* resp = insts_[slot].responder;
  uint64_t token = insts_[slot].token;
  insts_[slot].next_free = free_inst_;
  free_inst_ = slot;
  sim().note_progress();
  if (resp) resp->on_mem_complete(token, std::max(when, sim().now()));  // may re-enter issue()
}

void MemorySystemImpl::complete(uint32_t r, Tick t) {
  uint32_t slot = reqs_[r].inst;
  Tick done = std::max(t, reqs_[r].not_before);
  free_req(r);
  InstSlot& in = insts_[slot];
  in.when = std::max(in.when, done);
  if (--in.remaining == 0) finish_inst(slot, in.when);
}

void MemorySystemImpl::l1_lookup(uint32_t r, Tick now) {  // now: the lookup's tick (may be ahead)
  MemRequest& q = reqs_[r];
  SmPort& p = ports_[q.sm];
  switch (q.kind) {
    case ReqKind::kStore: {  // write-through, no allocate: drop the stale sectors
      if (p.l1.sets()) {
        if (TagLine* l = p.l1.find(q.line % p.l1.sets(), q.line)) l->valid &= ~q.mask;
      }
      send_up(r, now, store_wire_bytes(q));
      break;
    }
    case ReqKind::kLoad:
      if (p.l1.sets()) {
        l1_load(r, now);
        break;
      }
      [[fallthrough]];
    default:  // .cg loads and atomics go to L2
      ++c_.l1_bypass;
      send_up(r, now, specs_.noc.header_bytes);
  }
}

void MemorySystemImpl::l1_load(uint32_t r, Tick now) {
  MemRequest& q = reqs_[r];
  SmPort& p = ports_[q.sm];
  uint64_t set = q.line % p.l1.sets();
  TagLine* l = p.l1.find(set, q.line);
  uint32_t have = l ? (l->valid & q.mask) : 0;
  if (have == q.mask) {
    c_.l1_sector_hits += uint32_t(std::popcount(have));
    p.l1.touch(l);
    complete(r, now);
    return;
  }
  if (!(l && l->mshr) && p.free_mshrs.empty()) {  // wait for an MSHR (woken by a fill)
    ++c_.l1_mshr_full_stalls;
    q.next = kNil;
    if (p.blocked_tail == kNil)
      p.blocked_head = r;
    else
      reqs_[p.blocked_tail].next = r;
    p.blocked_tail = r;
    return;
  }
  c_.l1_sector_hits += uint32_t(std::popcount(have));
  c_.l1_sector_misses += uint32_t(std::popcount(q.mask & ~have));
  if (!l) {
    l = p.l1.victim(set);
    if (!l) {  // every way waits for a fill: go to L2 without allocating
      ++c_.l1_bypass;
      send_up(r, now, specs_.noc.header_bytes);
      return;
    }
    p.l1.assign(l, q.line);
  }
  p.l1.touch(l);
  uint32_t m;
  if (l->mshr) {
    m = l->mshr - 1;
    ++c_.l1_mshr_merges;
  } else {
    m = p.free_mshrs.back();
    p.free_mshrs.pop_back();
    p.mshrs[m] = L1Mshr{q.line, uint32_t(l - p.l1.ways().data()), 0, 0, kNil};
    l->mshr = m + 1;
  }
  L1Mshr& ms = p.mshrs[m];
  q.next = ms.waiters;
  ms.waiters = r;
  uint32_t need = q.mask & ~l->valid & ~ms.inflight;
  if (need) {  // this request carries the missing sectors to L2 and back
    ms.inflight |= need;
    ++ms.outstanding;
    q.fetch = need;
    q.mshr = m;
    send_up(r, now, specs_.noc.header_bytes);
  }
}

void MemorySystemImpl::l1_fill(uint32_t r, Tick now) {
  SmPort& p = ports_[reqs_[r].sm];
  L1Mshr& ms = p.mshrs[reqs_[r].mshr];
  TagLine& way = p.l1.ways()[ms.way];
  bool live = way.line == ms.line && way.mshr != 0;  // not invalidated by end_kernel meanwhile
  if (live) way.valid |= reqs_[r].fetch;
  reqs_[r].mshr = kNil;
  if (--ms.outstanding != 0) return;
  if (live) way.mshr = 0;
  uint32_t w = ms.waiters;
  ms = L1Mshr{};
  p.free_mshrs.push_back(uint32_t(&ms - p.mshrs.data()));
  while (w != kNil) {
    uint32_t next = reqs_[w].next;
    complete(w, now);
    w = next;
  }
  drain_blocked(p, now);
}

void MemorySystemImpl::drain_blocked(SmPort& p, Tick now) {
  while (p.blocked_head != kNil && !p.free_mshrs.empty()) {
    uint32_t b = p.blocked_head;
    p.blocked_head = reqs_[b].next;
    if (p.blocked_head == kNil) p.blocked_tail = kNil;
    l1_load(b, std::max(now, reqs_[b].not_before));
  }
}

void MemorySystemImpl::send_up(uint32_t r, Tick now, uint32_t bytes) {
  MemRequest& q = reqs_[r];
  SmPort& p = ports_[q.sm];
  q.slice = slice_of(q.line);
  c_.noc_up_bytes += bytes;
  Tick t = p.noc_up.reserve(now, bytes);
  if (q.kind == ReqKind::kStore && specs_.noc.store_bytes_per_cycle_per_sm > 0)
    t = std::max(t, p.store_out.reserve(now, store_wire_bytes(q)));
  t += noc_lat_;
  q.near = kNil;
  if (slices_[q.slice].partition != p.partition) {
    const bool load = q.kind == ReqKind::kLoad || q.kind == ReqKind::kLoadBypass;
    if (load && specs_.l2.near_copies) {  // looked up in the near partition first (l2_arrive)
      q.near = q.slice = near_slice(q.slice, p.partition);
      sim().schedule(t, this, kL2Arrive, r);
      return;
    }
    // A store (or atomic) to a far line updates the near partition's copy first.
    if (specs_.l2.near_partition_lookup && !load) {
      t = slices_[near_slice(q.slice, p.partition)].server.reserve(t, slice_cost_bytes(q));
      ++c_.l2_near_lookups;
    }
    t += far_extra_;
  }
  sim().schedule(t, this, kL2Arrive, r);
}

}  // namespace gtsim::mem
