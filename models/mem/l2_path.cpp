// The L2 slices (sectored, set-associative, LRU, write-back, write-allocate at sector
// granularity, address-hashed over slices) and the HBM behind them.
#include <algorithm>
#include <bit>

#include "models/mem/memory_system_impl.hpp"

namespace gtsim::mem {

void MemorySystemImpl::build_l2() {
  const L2Specs& s = specs_.l2;
  uint64_t lines = s.size_bytes / s.line_bytes;
  l2_sets_ = lines / s.assoc / s.slices;                               // per slice
  double rate = s.bytes_per_cycle_per_slice * specs_.sm_mhz / 1000.0;  // bytes per ns (L2 on the SM clock)
  slices_.resize(s.slices);
  for (uint32_t i = 0; i < s.slices; ++i) {
    slices_[i].tags.configure(l2_sets_, s.assoc);
    slices_[i].server.set_rate(rate);
    slices_[i].partition = uint32_t(uint64_t(i) * s.partitions / s.slices);
  }
}

// The slice hash: an XOR-fold of the line address at shifts 5, 11, 17, 23, 29. Consecutive lines
// and power-of-two strides spread evenly over the slices, and so do the row segments of padded
// matrices: over pitches of 2 x (512 .. 4200) bytes in steps of 16, the busiest slice takes at
// most 2.4x its share of 64-byte row segments. The fold at shifts 7, 14, 21, 28 used before
// cancels for 16 of those pitches (2064 bytes, gemm_tiled at 1032^3: 30 of 80 slices used, the
// busiest with 10x its share). The fold is invertible and the line stays the tag.
static uint64_t line_hash(uint64_t line) {
  return line ^ (line >> 5) ^ (line >> 11) ^ (line >> 17) ^ (line >> 23) ^ (line >> 29);
}

uint32_t MemorySystemImpl::slice_of(uint64_t line) const { return uint32_t(line_hash(line) % specs_.l2.slices); }

uint64_t MemorySystemImpl::set_of(uint64_t line) const { return (line_hash(line) / specs_.l2.slices) % l2_sets_; }

// The slice of `partition` that stands in for home slice `home` (the same place among its partition's slices).
uint32_t MemorySystemImpl::near_slice(uint32_t home, uint32_t partition) const {
  uint32_t per = uint32_t(slices_.size()) / specs_.l2.partitions;
  return std::min(uint32_t(slices_.size()) - 1, partition * per + home % per);
}

// The way of `slice` that holds `line` after a preload or warm-up: found, or the victim of its set
// (nullptr when every way waits for a fill). A warm-up's victim that other work left dirty is written
// back in the counters.
TagLine* MemorySystemImpl::place(L2Slice& slice, uint64_t set, uint64_t line, bool warm) {
  TagLine* l = slice.tags.find(set, line);
  if (l) return l;
  if ((l = slice.tags.victim(set)) == nullptr) return nullptr;
  if (warm && l->present() && l->dirty && !l->dirty_loop) {
    hbm_->count_write(uint32_t(std::popcount(burst_mask(l->dirty))) << sector_shift_);
    ++c_.l2_evictions_dirty;
  }
  slice.tags.assign(l, line);
  return l;
}

uint64_t MemorySystemImpl::preload(uint64_t base, uint64_t bytes, bool dirty, bool warm, uint32_t sm) {
  uint64_t fetched = 0;
  const uint64_t lb = specs_.l2.line_bytes, sb = uint64_t(1) << sector_shift_;
  const uint32_t all = sectors_per_line_ >= 32 ? ~0u : (1u << sectors_per_line_) - 1;
  for (uint64_t a = base / lb * lb; a < base + bytes; a += lb) {
    uint64_t line = a / lb;
    // the sectors of this line inside the range
    uint64_t lo = std::max(a, base), hi = std::min(a + lb, base + bytes);
    uint32_t first = uint32_t((lo - a) / sb), last = uint32_t((hi - a + sb - 1) / sb);
    uint32_t mask = all & (last >= 32 ? ~0u : (1u << last) - 1) & ~((1u << first) - 1);
    const uint32_t home = slice_of(line);
    const uint64_t set = set_of(line);
    // a load of skipped work from the far partition also left its copy near the SM (l2.near_copies)
    if (warm && !dirty && sm != kNil && specs_.l2.near_copies && slices_[home].partition != ports_[sm].partition) {
      L2Slice& n = slices_[near_slice(home, ports_[sm].partition)];
      if (TagLine* c = place(n, set, line, true)) c->valid |= mask, n.tags.touch(c);
    }
    L2Slice& s = slices_[home];
    TagLine* l = place(s, set, line, warm);
    if (!l) continue;                  // every way waits for a fill (not between kernels)
    if (!dirty && (mask & ~l->valid))  // as a miss fetches (l2_lookup)
      fetched += uint64_t(std::popcount(burst_mask(mask & ~l->valid) & ~l->valid)) << sector_shift_;
    l->valid |= mask;
    if (dirty) l->dirty |= mask, l->dirty_loop = warm;
    s.tags.touch(l);
  }
  return fetched;
}

GpuMemorySystem::L2Occupancy MemorySystemImpl::l2_occupancy() const {
  L2Occupancy o;
  for (const L2Slice& s : slices_) {
    const auto& ways = s.tags.ways();
    o.capacity += ways.size();
    for (const TagLine& l : ways) {
      o.valid += l.present() && l.valid != 0;
      o.dirty += l.present() && l.dirty != 0;
      o.dirty_sectors += l.present() ? uint64_t(std::popcount(l.dirty)) : 0;
    }
  }
  return o;
}

void MemorySystemImpl::fill_l2_placeholders(uint64_t lines, uint64_t dirty) {
  // Lines from 2^56 bytes up: no buffer is placed there (ir::Program places them from 2^32, workloads
  // from 2^40), so no kernel hits them; a placeholder evicted dirty is written back as any line.
  constexpr uint64_t kBase = (uint64_t(1) << 56);
  const uint64_t lb = specs_.l2.line_bytes;
  for (uint64_t i = 0; i < lines; ++i, ++next_placeholder_) preload_l2(kBase + next_placeholder_ * lb, lb, i < dirty);
}

uint32_t MemorySystemImpl::store_wire_bytes(const MemRequest& q) const {
  const uint32_t sectors = uint32_t(std::popcount(q.mask)) << sector_shift_;
  return sectors + (q.bytes < sectors ? specs_.noc.store_mask_bytes : 0u);
}

uint64_t MemorySystemImpl::slice_cost_bytes(const MemRequest& q) const {
  const L2Specs& s = specs_.l2;
  uint64_t bytes = uint64_t(std::popcount(q.fetch)) << sector_shift_;
  if (q.kind == ReqKind::kStore && s.write_bytes_per_cycle_per_slice > 0)  // its wire bytes at the write rate
    bytes =
        uint64_t(std::llround(store_wire_bytes(q) * s.bytes_per_cycle_per_slice / s.write_bytes_per_cycle_per_slice));
  if (s.requests_per_cycle_per_slice <= 0) return bytes;
  double per_request = s.bytes_per_cycle_per_slice / s.requests_per_cycle_per_slice;  // one lookup, in bytes
  return std::max<uint64_t>(bytes, uint64_t(std::llround(per_request)));
}

uint32_t MemorySystemImpl::burst_mask(uint32_t sectors) const {
  uint32_t per_burst = std::max(1u, specs_.hbm.burst_bytes >> sector_shift_);
  if (per_burst <= 1) return sectors;
  uint32_t group = (1u << per_burst) - 1, out = 0;
  for (uint32_t b = 0; b < sectors_per_line_; b += per_burst)
    if (sectors & (group << b)) out |= group << b;
  return out;
}

void MemorySystemImpl::l2_arrive(uint32_t r, Tick now) {
  MemRequest& q = reqs_[r];
  L2Slice& s = slices_[q.slice];
  Tick start = std::max(now, s.server.next_free());
  c_.l2_slice_queue_ns.sample(double(start - now) / double(kTicksPerNs));
  Tick t = s.server.reserve(now, slice_cost_bytes(q));
  if (q.near == q.slice) return near_copy_lookup(r, t);
  if (q.kind == ReqKind::kStore) {  // accepted by L2: acknowledged without an event of its own
    Tick ack = std::max(t, l2_write(r, t));
    complete(r, ack);
    return;
  }
  l2_read(r, t);
}

TagLine* MemorySystemImpl::l2_allocate(L2Slice& s, uint64_t set, uint64_t line, Tick t, Tick& writeback_done) {
  TagLine* v = s.tags.victim(set);
  if (v->present() && v->dirty) {            // write back the dirty sectors (in bursts)
    Counter::LoopWork whose(v->dirty_loop);  // the work that dirtied the line, not the one evicting it
    uint32_t wb = burst_mask(v->dirty);
    writeback_done =
        hbm_->access(t, v->line * specs_.l2.line_bytes, uint32_t(std::popcount(wb)) << sector_shift_, true);
    ++c_.l2_evictions_dirty;
  }
  s.tags.assign(v, line);
  return v;
}

// l2.near_copies: a far-homed load looks in its near slice first (which has been charged for the
// request: it serves the data or, on a miss, fills a copy with it). Found whole, it is served there;
// otherwise it crosses to its home slice (far_extra_cycles) and leaves a copy on the way back.
void MemorySystemImpl::near_copy_lookup(uint32_t r, Tick t) {
  MemRequest& q = reqs_[r];
  L2Slice& s = slices_[q.slice];
  TagLine* l = s.tags.find(set_of(q.line), q.line);
  if (l && (l->valid & q.fetch) == q.fetch) {
    const uint32_t n = uint32_t(std::popcount(q.fetch));
    c_.l2_read_sectors += n;
    c_.l2_sector_hits += n;
    c_.l2_read_hits += n;
    c_.l2_near_copy_hits += n;
    s.tags.touch(l);
    q.near = kNil;
    respond(r, std::max(t, l->ready));
    return;
  }
  ++c_.l2_near_copy_misses;
  q.slice = slice_of(q.line);
  sim().schedule(t + far_extra_, this, kL2Arrive, r);
}

// The data of a far-homed load passes its near slice on the way to the SM and stays there, clean.
void MemorySystemImpl::keep_near_copy(const MemRequest& q, Tick t) {
  L2Slice& s = slices_[q.near];
  const uint64_t set = set_of(q.line);
  TagLine* l = s.tags.find(set, q.line);
  if (!l) {
    Tick unused = 0;
    l = l2_allocate(s, set, q.line, t, unused);
  }
  l->valid |= q.fetch;
  l->ready = std::max(l->ready, t);
  s.tags.touch(l);
}

// A write at the home slice: the copy in the writer's partition takes the new sectors, the other
// partitions' copies are dropped (the next load there crosses to the home slice again).
void MemorySystemImpl::update_copies(const MemRequest& q, uint32_t sectors) {
  const uint32_t home = slice_of(q.line), home_partition = slices_[home].partition;
  const uint32_t writer = ports_[q.sm].partition;
  const uint64_t set = set_of(q.line);
  for (uint32_t p = 0; p < specs_.l2.partitions; ++p) {
    if (p == home_partition) continue;
    L2Slice& s = slices_[near_slice(home, p)];
    TagLine* l = s.tags.find(set, q.line);
    if (!l) continue;
    if (p == writer)
      l->valid |= sectors;
    else
      s.tags.assign(l, TagLine::kInvalid);
  }
}

// Stores mark their sectors valid and dirty without reading DRAM (sector write-allocate).
// Returns when the store may be acknowledged: a dirty eviction must first enter the HBM queue.
Tick MemorySystemImpl::l2_write(uint32_t r, Tick t) {
  MemRequest& q = reqs_[r];
  L2Slice& s = slices_[q.slice];
  uint64_t set = set_of(q.line);
  uint32_t n = uint32_t(std::popcount(q.mask));
  c_.l2_write_sectors += n;
  TagLine* l = s.tags.find(set, q.line);
  Tick ack = t;
  // Whole-sector writes never wait for DRAM: Nsight Compute counts them as hits (a copy kernel
  // shows ~50% L2 sector hit rate: validation/data/h200/b1/ncu.csv).
  c_.l2_sector_hits += n;
  if (!l) l = l2_allocate(s, set, q.line, t, ack);
  l->valid |= q.mask;
  l->dirty |= q.mask;
  l->dirty_loop = l->dirty_loop || q.loop_work;
  s.tags.touch(l);
  if (specs_.l2.near_copies) update_copies(q, q.mask);
  return ack;
}

void MemorySystemImpl::l2_read(uint32_t r, Tick t) {
  MemRequest& q = reqs_[r];
  L2Slice& s = slices_[q.slice];
  uint64_t set = set_of(q.line);
  uint32_t need = q.fetch;
  TagLine* l = s.tags.find(set, q.line);
  uint32_t have = l ? (l->valid & need) : 0;
  uint32_t miss = need & ~have;
  uint32_t n = uint32_t(std::popcount(need));
  if (q.kind == ReqKind::kAtomic)
    c_.l2_atom_sectors += n;
  else
    c_.l2_read_sectors += n;
  c_.l2_sector_hits += uint32_t(std::popcount(have));
  c_.l2_read_hits += q.kind == ReqKind::kAtomic ? 0 : uint32_t(std::popcount(have));
  c_.l2_sector_misses += uint32_t(std::popcount(miss));
  Tick ready = t;
  if (have) ready = std::max(ready, l->ready);  // a fill in flight: wait for it
  if (!l) {
    Tick unused = 0;
    l = l2_allocate(s, set, q.line, t, unused);
  }
  if (q.kind == ReqKind::kAtomic) {
    l->dirty |= need, l->dirty_loop = l->dirty_loop || q.loop_work;  // read-modify-write in the slice
    if (specs_.l2.near_copies) update_copies(q, need);
  }
  s.tags.touch(l);
  if (miss) {
    uint32_t fetch = burst_mask(miss) & ~l->valid;
    uint32_t first = uint32_t(std::countr_zero(fetch));
    Tick done = hbm_->access(t, q.line * specs_.l2.line_bytes + (uint64_t(first) << sector_shift_),
                             uint32_t(std::popcount(fetch)) << sector_shift_, false);
    l->valid |= fetch;
    l->ready = std::max(l->ready, done);
    sim().schedule(std::max(done, ready), this, kHbmDone, r);
    return;
  }
  respond(r, ready);
}

// Data leaves the slice (slice latency), crosses the crossbar to the SM, and arrives there.
void MemorySystemImpl::respond(uint32_t r, Tick t) {
  MemRequest& q = reqs_[r];
  SmPort& p = ports_[q.sm];
  if (q.near != kNil) keep_near_copy(q, t);
  uint32_t bytes = uint32_t(std::popcount(q.fetch)) << sector_shift_;
  c_.noc_down_bytes += bytes;
  Tick leave = t + slice_lat_;
  if (!group_down_.empty()) leave = group_down_[p.group].reserve(leave, bytes);
  Tick arrive = p.noc_down.reserve(leave, bytes) + noc_lat_;
  sim().schedule(arrive, this, kSmArrive, r);
}

}  // namespace gtsim::mem
