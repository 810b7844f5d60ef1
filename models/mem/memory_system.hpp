// The contract between the SM side (models/gpu) and the memory side (models/mem).
//
// The SM's LSU hands a warp's global memory instruction to the memory system, which coalesces
// it into 128-byte line requests with 32-byte sector masks (one request per line), sends each
// through the SM's L1, the crossbar, an L2 slice and HBM as needed (one event per request per
// hop), and reports back once per instruction when the last request completes.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels_ir/exec/dyn_inst.hpp"
#include "sim/config.hpp"
#include "sim/simulation.hpp"

namespace gtsim::mem {

// Implemented by the SM side: called once per issued global memory instruction.
class MemResponder {
 public:
  virtual ~MemResponder() = default;
  // Loads and atomics: the data is back (the destination register becomes ready).
  // Stores and reductions: the last request has been accepted by L2 (write-back caches).
  // cp.async: the data has landed in shared memory.
  virtual void on_mem_complete(uint64_t token, Tick when) = 0;
};

// What the LSU needs to know at issue: how many line requests the instruction became (the
// L1 tag pipe accepts one request per cycle, so an uncoalesced access occupies it longer).
struct IssueInfo {
  uint32_t requests = 0;  // 128-byte line requests
  uint32_t sectors = 0;   // 32-byte sectors requested
};

class GpuMemorySystem {
 public:
  virtual ~GpuMemorySystem() = default;

  // Builds the memory side from the whole machine config (reads the `l1`, `noc`, `l2`, `hbm`
  // sections and `clocks`). `sms` = number of SMs. Throws InputError on bad config.
  static std::unique_ptr<GpuMemorySystem> create(Simulation& sim, StatGroup& parent, const ConfigNode& root,
                                                 uint32_t sms);

  // Called before each kernel: the L1 capacity left by the kernel's shared-memory carve-out.
  virtual void begin_kernel(uint32_t l1_bytes_per_sm) = 0;
  // The SM clock from now on (between kernels: a kernel that issues tensor-core instructions runs
  // at clocks.sm_mhz_tensor). The L1, its tag pipe and the SM's crossbar port follow it; the L2
  // slices stay on clocks.sm_mhz.
  virtual void set_sm_clock(double mhz) = 0;
  // Called after each kernel: L1s are invalidated (as at a kernel boundary); L2 keeps its
  // contents, dirty lines included, for the next kernel.
  virtual void end_kernel() = 0;

  // Between kernels: puts the lines of [base, base + bytes) in the L2 as a launch that touched them
  // last would leave them (valid, dirty when `dirty`, most recently used), without timing or DRAM
  // traffic: what an earlier launch on the same buffers left behind (gpu::L2Start::kResident). A line
  // it evicts is dropped (its write-back belongs to that earlier launch).
  virtual void preload_l2(uint64_t base, uint64_t bytes, bool dirty) = 0;
  // The same for the lines of skipped loop iterations (sampled simulation): they stand for loop
  // work (Counter::LoopWork), and a line they displace that other work left dirty is written back
  // in the counters (no time: it happened in the skipped time, which loop work's rates leave out).
  // `sm` read them: with l2.near_copies a line loaded from the far partition is also copied near it.
  // Returns the DRAM bytes a read of the range would have fetched (its sectors that were not valid
  // in their home slice, in whole bursts; 0 for a write): what functional warming counts.
  virtual uint64_t warm_l2(uint64_t base, uint64_t bytes, bool dirty, uint32_t sm) = 0;

  // Sampled simulation (models/gpu/sampler.hpp): how full the L2 is, in lines, and placeholder lines
  // for what skipped work would have left in it: `lines` lines (the first `dirty` of them dirty) at
  // addresses no kernel uses, most recently used, so that the L2 fills up and writes back as it would
  // have. No time, no counters.
  struct L2Occupancy {
    uint64_t valid = 0, dirty = 0, capacity = 0;  // lines
    uint64_t dirty_sectors = 0;                   // 32-byte sectors still to be written back
  };
  virtual L2Occupancy l2_occupancy() const = 0;
  virtual void fill_l2_placeholders(uint64_t lines, uint64_t dirty) = 0;
  // The memory system's queues now (sampled simulation): the simulation's tick, the work queued on
  // the HBM's buses (HbmModel::backlog), the requests in flight (issued, not yet complete) and the
  // global requests issued so far. A steady state keeps its requests in flight level; its HBM
  // backlog level, or growing at a steady rate (posted write-backs that no SM waits for): then a
  // skip must leave behind the backlog the skipped work would have queued.
  struct Queues {
    Tick now = 0, hbm_backlog = 0;
    uint64_t requests_in_flight = 0, requests_issued = 0;
  };
  virtual Queues queues() const = 0;
  // Lengthens the HBM's backlog by `extra` ticks: the queued traffic (posted write-backs) of work a
  // skip fast-forwarded, which the HBM must still drain.
  virtual void queue_hbm(Tick extra) = 0;

  // Issues a global memory instruction (kLdGlobal, kStGlobal, kAtomGlobal, kCpAsync) of SM
  // `sm` at tick `now`. responder->on_mem_complete(token, t) is called exactly once, at t >= now.
  virtual IssueInfo issue(uint32_t sm, const ir::DynInst& inst, Tick now, MemResponder* responder, uint64_t token) = 0;

  // Totals since construction (the GPU model takes per-kernel differences).
  struct Totals {
    uint64_t dram_read_bytes = 0;
    uint64_t dram_write_bytes = 0;  // as Nsight Compute's dram__bytes_write.sum: evictions of dirty lines
    uint64_t l2_sector_hits = 0, l2_sector_misses = 0;
    uint64_t l1_sector_hits = 0, l1_sector_misses = 0;
    uint64_t global_requests = 0, global_sectors = 0;
  };
  virtual Totals totals() const = 0;
  // Nsight Compute-named metrics for the current totals (lts__t_sectors..., dram__bytes_read.sum, ...).
  virtual void add_metrics(nlohmann::json& metrics, const Totals& since) const = 0;
};

}  // namespace gtsim::mem
