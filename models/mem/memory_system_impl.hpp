// The memory side's implementation of GpuMemorySystem: coalescer -> per-SM L1 -> crossbar ->
// L2 slice -> HBM. One event per request per hop; request and instruction state in pooled
// slots (vector + free list); bandwidth as servers with a next-free time.
//
// Latency bookkeeping (all on the SM clock except HBM): an L1 hit completes l1.latency_cycles
// after its tag lookup; an L2 hit completes l2.hit_latency_cycles after it (L1 lookup, crossbar
// both ways and the slice's own time, so the configured figure is what a pointer chase sees);
// an L2 miss adds the HBM's loaded latency (hbm.latency_ns when idle).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/mem/coalescer.hpp"
#include "models/mem/hbm.hpp"
#include "models/mem/mem_specs.hpp"
#include "models/mem/memory_system.hpp"
#include "models/mem/sector_tags.hpp"
#include "sim/simulation.hpp"

namespace gtsim::mem {

inline constexpr uint32_t kNil = ~0u;

enum class ReqKind : uint8_t { kLoad, kLoadBypass, kStore, kAtomic };

struct MemRequest {
  uint64_t line = 0;
  uint32_t inst = kNil;  // InstSlot index
  uint32_t next = kNil;  // link in an MSHR's waiter list or the SM's blocked list
  uint32_t mask = 0;     // sectors the instruction needs from this line
  uint32_t fetch = 0;    // sectors this request carries to / from L2
  uint32_t mshr = kNil;  // L1 MSHR whose fill this request carries
  uint32_t slice = 0;
  uint32_t near = kNil;  // l2.near_copies: the near slice that is looked up first and keeps a copy
  uint32_t bytes = 0;    // bytes the lanes touch in the line (a store's data)
  Tick not_before = 0;   // earliest completion (tag lookup + L1 latency)
  uint16_t sm = 0;
  ReqKind kind = ReqKind::kLoad;
  bool loop_work = false;  // issued by an instruction of the sampling loop (Counter::LoopWork)
};

struct InstSlot {
  MemResponder* responder = nullptr;
  uint64_t token = 0;
  uint32_t remaining = 0;
  uint32_t next_free = kNil;
  Tick when = 0;  // latest completion of its requests so far
};

struct L1Mshr {
  uint64_t line = 0;
  uint32_t way = 0;          // index into the L1's ways (stable across invalidation)
  uint32_t inflight = 0;     // sectors requested from L2
  uint32_t outstanding = 0;  // fetches not yet back
  uint32_t waiters = kNil;   // requests completed when the last fetch is back
};

// One SM's port into the memory side: its L1 and its crossbar links.
struct SmPort {
  SectorTags l1;
  Tick tag_free = 0;  // L1 tag pipe next-free tick
  BandwidthServer noc_up, noc_down;
  BandwidthServer store_out;  // its stores' wire bytes (noc.store_bytes_per_cycle_per_sm)
  std::vector<L1Mshr> mshrs;
  std::vector<uint32_t> free_mshrs;
  uint32_t blocked_head = kNil, blocked_tail = kNil;
  uint32_t partition = 0;
  uint32_t group = 0;  // its SM group's link (noc.sms_per_group)
};

struct L2Slice {
  SectorTags tags;
  BandwidthServer server;
  uint32_t partition = 0;
};

// Raw counters (Nsight Compute names in add_metrics). Hot paths increment these members.
struct MemCounters {
  explicit MemCounters(StatGroup& g);
  Counter &ld_requests, &ld_sectors, &st_requests, &st_sectors, &atom_requests, &atom_sectors;
  Counter &l1_sector_hits, &l1_sector_misses, &l1_mshr_merges, &l1_mshr_full_stalls, &l1_bypass;
  Counter &noc_up_bytes, &noc_down_bytes;
  Counter &l2_read_sectors, &l2_write_sectors, &l2_atom_sectors, &l2_sector_hits, &l2_sector_misses;
  Counter &l2_read_hits, &l2_evictions_dirty, &l2_near_lookups, &l2_near_copy_hits, &l2_near_copy_misses;
  Histogram& l2_slice_queue_ns;
};

class MemorySystemImpl final : public GpuMemorySystem, public Component {
 public:
  MemorySystemImpl(Simulation& sim, StatGroup& parent, const MemSpecs& specs, uint32_t sms);
  void begin_kernel(uint32_t l1_bytes_per_sm) override;
  void set_sm_clock(double mhz) override;
  void end_kernel() override;
  void preload_l2(uint64_t base, uint64_t bytes, bool dirty) override { preload(base, bytes, dirty, false, kNil); }
  uint64_t warm_l2(uint64_t base, uint64_t bytes, bool dirty, uint32_t sm) override {
    return preload(base, bytes, dirty, true, sm);
  }
  // Returns the DRAM bytes a read would have fetched (warm_l2).
  uint64_t preload(uint64_t base, uint64_t bytes, bool dirty, bool warm, uint32_t sm);
  L2Occupancy l2_occupancy() const override;
  void fill_l2_placeholders(uint64_t lines, uint64_t dirty) override;
  Queues queues() const override;
  void queue_hbm(Tick extra) override { hbm_->queue(sim_.now(), extra); }
  IssueInfo issue(uint32_t sm, const ir::DynInst& inst, Tick now, MemResponder* responder, uint64_t token) override;
  Totals totals() const override;
  void add_metrics(nlohmann::json& metrics, const Totals& since) const override;
  void handle_event(Tick now, uint32_t kind, uint64_t arg) override;

  const MemSpecs& specs() const { return specs_; }
  uint32_t slice_of(uint64_t line) const;                // address hash (multiplicative)
  uint64_t slice_cost_bytes(const MemRequest& q) const;  // what a request costs a slice, in bytes of its rate
  uint32_t store_wire_bytes(const MemRequest& q) const;  // a store's sectors' data plus its byte mask if partial
  uint64_t l1_sets() const { return ports_.empty() ? 0 : ports_[0].l1.sets(); }
  const L2Slice& slice(uint32_t i) const { return slices_[i]; }
  uint32_t requests_in_flight() const { return uint32_t(reqs_.size() - free_reqs_.size()); }

 private:
  enum EventKind : uint32_t { kL2Arrive, kHbmDone, kSmArrive, kInstDone };

  uint32_t alloc_req();
  void free_req(uint32_t r) { free_reqs_.push_back(r); }
  // Completes request r at max(t, its not_before); the instruction completes with its last one
  // (the responder is called then, with a `when` that may lie ahead of now: it schedules).
  void complete(uint32_t r, Tick t);
  void finish_inst(uint32_t inst, Tick when);
  // L1 side (memory_system.cpp)
  void l1_lookup(uint32_t r, Tick t);
  void l1_load(uint32_t r, Tick now);
  void l1_fill(uint32_t r, Tick now);
  void drain_blocked(SmPort& p, Tick now);
  void send_up(uint32_t r, Tick now, uint32_t bytes);
  // L2 side (l2_path.cpp)
  void l2_arrive(uint32_t r, Tick now);
  void near_copy_lookup(uint32_t r, Tick t);  // served there, or sent on to the home slice
  void keep_near_copy(const MemRequest& q, Tick t);
  void update_copies(const MemRequest& q, uint32_t sectors);  // a write at the home slice
  uint32_t near_slice(uint32_t home, uint32_t partition) const;
  uint64_t set_of(uint64_t line) const;
  Tick l2_write(uint32_t r, Tick t);
  void l2_read(uint32_t r, Tick t);
  TagLine* l2_allocate(L2Slice& s, uint64_t set, uint64_t line, Tick t, Tick& writeback_done);
  TagLine* place(L2Slice& slice, uint64_t set, uint64_t line, bool warm);  // preload / warm-up
  uint32_t burst_mask(uint32_t sectors) const;
  void respond(uint32_t r, Tick t);
  void configure_l1(uint32_t bytes);
  void build_l2();

  MemSpecs specs_;
  ClockDomain clock_;      // clocks.sm_mhz: the L2 slices
  ClockDomain gpc_clock_;  // the SMs' clock now: L1s and the SMs' crossbar ports
  Coalescer coalescer_;
  std::vector<SmPort> ports_;
  std::vector<BandwidthServer> group_down_;  // per SM group: the L2 -> SM data its SMs share
  std::vector<L2Slice> slices_;
  uint64_t next_placeholder_ = 0;  // fill_l2_placeholders: the next unused placeholder line
  std::unique_ptr<HbmModel> hbm_;
  std::vector<MemRequest> reqs_;
  std::vector<uint32_t> free_reqs_;
  std::vector<InstSlot> insts_;
  uint32_t free_inst_ = kNil;
  MemCounters c_;
  uint64_t l2_sets_ = 0;
  uint32_t sector_shift_ = 5, sectors_per_line_ = 4;
  Tick l1_lat_ = 0, noc_lat_ = 0, slice_lat_ = 0, far_extra_ = 0, tag_cost_ = 0;
  double tag_cycles_per_byte_ = 0;
  // Kernel window for per-kernel metrics that Totals does not carry.
  Tick kernel_start_ = 0;
  std::vector<uint64_t> snapshot_;
  std::vector<uint64_t> snapshot_counters() const;
};

}  // namespace gtsim::mem
