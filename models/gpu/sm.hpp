// One streaming multiprocessor: sub-partitions with a warp scheduler each, a per-warp register
// scoreboard, functional units with latency and initiation interval, a tensor core per
// sub-partition, the LSU (global memory through the memory system, shared memory through a
// banked pipe that serves one wavefront per cycle), barriers, mbarriers and cp.async groups.
//
// Event-driven: the SM has at most one pending step event, at the earliest cycle at which some
// sub-partition could issue; a sub-partition whose warps all wait on memory or a barrier sleeps
// until a completion wakes it. Time inside the SM is counted in SM cycles. docs/gpu_sm.md.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/exec/shared_banks.hpp"
#include "models/gpu/sampler.hpp"
#include "models/gpu/shared_pipe.hpp"
#include "models/gpu/specs.hpp"
#include "models/gpu/timeline.hpp"
#include "models/gpu/warp_scheduler.hpp"
#include "models/mem/memory_system.hpp"
#include "sim/simulation.hpp"

namespace gtsim::gpu {

inline constexpr uint64_t kNever = ~0ull;

// Per-SM counters, registered in the stats tree as gpu/smN/<name>; the hot path increments
// them through an index (no string lookup). Per-kernel figures are differences of these.
enum SmCounter : int {
  kInstExecuted,
  kThreadInstExecuted,
  kFlops,
  kIssueActiveCycles,
  kCyclesActive,
  kWarpCyclesActive,
  kStallScoreboard,
  kStallMemory,
  kStallUnitBusy,
  kStallBarrier,
  kStallNotSelected,
  kSharedRequests,
  kSharedWavefronts,
  kSharedIdealWavefronts,
  kSharedLoads,
  kSharedStores,
  kSharedPipeBusy,
  kGlobalInsts,
  kGlobalRequests,
  kGlobalSectors,
  kL1PipeBusy,
  kTensorWritebackCycles,
  kCtasLaunched,
  kWarpsLaunched,
  kInstClassBase,                                             // + ir::OpClass
  kPipeBusyBase = kInstClassBase + int(ir::OpClass::kCount),  // + Pipe: unit busy cycles (all sub-partitions)
  kNumSmCounters = kPipeBusyBase + kNumPipes
};

// What every SM needs to know about the kernel being run.
struct KernelLaunch {
  const ir::Program* program = nullptr;
  ir::Dim3 grid;
  uint32_t warps_per_cta = 0;
};

// Told when a CTA leaves an SM (its last warp has exited), so the next one can be dispatched.
class CtaListener {
 public:
  virtual ~CtaListener() = default;
  virtual void on_cta_exit(uint32_t sm, uint64_t cycle) = 0;
};

class Sm final : public Component, public mem::MemResponder {
 public:
  Sm(Simulation& sim, StatGroup& parent, uint32_t id, const GpuSpecs& specs, const ClockDomain& clock,
     mem::GpuMemorySystem& memory, CtaListener& listener);
  ~Sm() override;

  void begin_kernel(const KernelLaunch& k);
  // Closes the occupancy integrals at `cycle` (the kernel's end).
  void end_kernel(uint64_t cycle);
  uint32_t resident_ctas() const { return resident_ctas_; }
  // Places CTA `linear_id` on this SM; its warps start issuing at `start_cycle`.
  void launch_cta(uint64_t linear_id, uint64_t start_cycle);
  bool idle() const { return resident_ctas_ == 0 && outstanding_stores_ == 0; }
  uint64_t last_activity_cycle() const { return last_activity_; }
  // Appends one line per warp that has not finished: where it waits and why (deadlock reports).
  void describe_waiting(std::string& out) const;
  uint64_t counter(SmCounter c) const { return ctr_[c]->value(); }
  // Sampled simulation (models/gpu/sampler.hpp): the sampler told of iterations and CTAs, the
  // residency integrals brought up to `cycle`, and every warp of the CTA in `slot` told to skip `n`
  // iterations of `loop` at its next pass of the loop's increment.
  void set_sampler(Sampler* s) { sampler_ = s; }
  // Records CTAs, sub-partition states and stalls on a timeline (`--trace`); null: nothing recorded.
  void set_timeline(Timeline* t) { timeline_ = t; }
  void flush_residency(uint64_t cycle) { note_residency(std::max(cycle, residency_since_)); }
  void skip_cta(uint32_t slot, uint32_t loop, int64_t n);
  // The access streams of the CTA in `slot` for warming the L2 over skipped iterations (one per warp
  // whose last two complete iterations touched the same lines up to a constant step each).
  // Returns the warps whose accesses could not be streamed (their last two iterations touched a
  // different number of ranges): their skipped reads are not in what warming counts.
  size_t warm_streams(uint32_t slot, std::vector<WarmStream>& out) const;

  void handle_event(Tick now, uint32_t kind, uint64_t arg) override;
  void on_mem_complete(uint64_t token, Tick when) override;

 private:
  enum class WarpState : uint8_t { kFree, kReady, kBarrier, kMbarWait, kCpWait, kExited };
  enum class Gate : uint8_t { kNone, kGlobal, kShared };
  // The fields the issue scan reads for every resident warp come first, in one host cache line.
  struct alignas(64) Warp {
    uint64_t dep_ready = 0;   // max reg_ready over inst's sources and destinations
    uint64_t hold_until = 0;  // first cycle it may issue after a release (the barrier's latency)
    uint64_t ready_from = 0;  // first cycle the warp could have issued inst (stall accounting)
    uint8_t sp = 0;
    WarpState state = WarpState::kFree;
    Pipe pipe = Pipe::kNone;
    Gate gate = Gate::kNone;
    bool dep_mem = false;
    uint32_t pending = 0;  // outstanding loads, atomics with a result, cp.async
    uint32_t cta = 0;      // CTA slot
    uint32_t warp_in_cta = 0;
    std::optional<ir::WarpExecutor> exec;
    std::vector<uint64_t> reg_ready;  // cycle each register's value is available; kNever while a load is out
    std::vector<uint8_t> reg_mem;     // 1 when the register's last writer was a memory operation
    uint64_t wait_since = 0;          // cycle it started waiting at a barrier / wait
    std::deque<uint32_t> cp_groups;   // outstanding cp.async per group, oldest first; back() = open group
    uint64_t cp_base_seq = 0;         // group sequence number of cp_groups.front()
    std::deque<uint64_t> wg_groups;   // committed wgmma groups: the cycle each one's last wgmma completes
    uint64_t wg_open = 0;             // the same for the wgmma issued since the last commit
    uint64_t wait_addr = 0;           // mbarrier address waited on
    uint32_t wait_static_id = 0;      // the instruction it waits at (diagnostics)
    int32_t wait_arg = 0;             // barrier id, wait_group N or mbarrier parity
    ir::DynInst inst;                 // the next instruction to issue
    // Sampling: the global lines this warp touched in its last three iterations of the sampling loop
    // (warm_iter[k]: the iteration ring slot k holds, -1 none), to warm the L2 for skipped ones.
    std::array<std::vector<WarmAccess>, 3> warm_rec;
    std::array<int64_t, 3> warm_iter{-1, -1, -1};
  };
  struct MBarrier {
    uint64_t addr = 0;
    int64_t expected = 0, pending = 0;
    uint64_t phase = 0;
  };
  struct CtaSlot {
    bool used = false;
    uint64_t linear_id = 0;
    ir::Dim3 ctaid;
    uint32_t warps_total = 0, warps_done = 0, warps_exited = 0;
    std::vector<uint16_t> warps;  // warp slots, by warp index in the CTA
    std::array<uint32_t, 16> bar_arrived{};
    std::array<uint64_t, 16> bar_last{};  // cycle the latest arrival was counted
    std::vector<MBarrier> mbars;
  };
  struct SubPartition {
    std::unique_ptr<WarpScheduler> sched;
    std::vector<uint16_t> warps;                  // resident, not exited, oldest first
    std::array<uint64_t, kNumPipes> pipe_free{};  // first cycle each unit accepts an instruction
    std::deque<uint64_t> mio_starts;              // start cycles of its shared requests, ascending
    uint64_t next_cycle = kNever;                 // cycle of its next step (kNever: asleep)
    uint64_t stepped_through = 0;                 // one past the last cycle it stepped
    double tensor_carry = 0;  // fraction of a cycle the tensor core's last mma left over (see exec_tensor)
  };
  enum EventKind : uint32_t { kStep = 0, kMemDone = 1, kSharedPipe = 2 };
  enum TokenKind : uint64_t { kTokLoad = 1, kTokStore = 2, kTokCp = 3, kTokTma = 4 };
  // A bulk tensor copy in flight: its line requests outstanding and the mbarrier it completes on.
  struct TmaCopy {
    uint32_t cta = 0, requests_left = 0;
    uint64_t mbar = 0;
  };

  // Issue stage (sm.cpp)
  void step(uint32_t s, uint64_t c);
  uint64_t earliest_issue(const Warp& w, const SubPartition& sp) const;
  void issue(uint16_t wi, uint64_t c);
  void account_stalls(Warp& w, uint64_t c, uint64_t unit_free);
  void fetch(uint16_t wi, uint64_t c);
  void compute_deps(Warp& w);
  void report_iteration(const Warp& w0, uint64_t c);  // the sampler hook: a CTA's warps' progress
  // Whether the warp is inside a run of the sampling loop (its work is loop work: Counter::LoopWork).
  bool in_sampling_loop(const Warp& w) const {
    return record_warm_ && w.exec->loop_iterations(sample_loop_) < w.exec->loop_trip(sample_loop_);
  }
  void ensure_regs(Warp& w, uint16_t reg);
  void wake(uint32_t s, uint64_t cycle);
  uint64_t tick_to_cycle(Tick t) const;
  void note_residency(uint64_t c);
  void warp_exit(uint16_t wi, uint64_t c);
  void warp_done(uint16_t wi, uint64_t c);
  // Execution units and memory (sm_exec.cpp)
  void exec_alu(Warp& w, uint64_t c);
  void exec_tensor(Warp& w, uint64_t c);
  void exec_global(uint16_t wi, uint64_t c);
  void exec_shared(Warp& w, uint64_t c);
  void count_shared(const ir::SharedCost& cost);
  void record_warm(Warp& w);
  // The warp's record of the current iteration of the sampling loop (cleared when it starts), or null
  // outside that loop.
  std::vector<WarmAccess>* warm_ring(Warp& w);
  uint64_t reserve_shared_pipe(uint64_t c, const ir::SharedCost& cost);
  // sm.shared.arbitration round_robin / sub_partition: the request goes to shared_pipe_, its result when served.
  void queue_shared(uint16_t wi, uint64_t c, uint32_t wavefronts, bool result);
  void advance_shared_pipe(uint64_t until);
  void schedule_shared_pipe();
  void apply_mem_done(uint64_t token, Tick when);
  // Synchronization (sm_sync.cpp)
  void exec_sync(uint16_t wi, uint64_t c);
  void bar_sync(uint16_t wi, uint64_t c);
  void mbar_op(uint16_t wi, uint64_t c);
  // Counts `n` arrivals on the CTA's mbarrier; a completed phase releases its waiters at c + 1.
  void mbar_arrive(CtaSlot& cta, MBarrier& m, int64_t n, uint64_t c);
  MBarrier* find_mbar(CtaSlot& cta, uint64_t addr);
  // cp.async.bulk.tensor (sm_tma.cpp): the box as line requests through the memory system, which
  // bypass the L1; the last one to land is one arrival on the copy's mbarrier.
  void tma_load(uint16_t wi, uint64_t c);
  void tma_request_done(uint16_t wi, uint64_t idx, uint64_t c);
  // wgmma.commit_group / wgmma.wait_group N (sm_tma.cpp).
  void wgmma_group(Warp& w, uint64_t c);
  bool cp_wait_satisfied(const Warp& w) const;
  void release(uint16_t wi, uint64_t c, SmCounter reason);
  [[noreturn]] void fail_divergent_barrier(const Warp& w, uint64_t c) const;
  std::string warp_place(const Warp& w, uint32_t static_id) const;

  uint32_t id_;
  const GpuSpecs& specs_;
  const ClockDomain& clock_;
  mem::GpuMemorySystem& memory_;
  CtaListener& listener_;
  KernelLaunch kernel_;
  std::array<uint32_t, kNumPipes> ii_{}, latency_{};
  std::array<double, size_t(ir::DType::kCount)> mma_rate_{}, wgmma_rate_{};  // flops/cycle per sub-partition
  double ldmatrix_wb_per_reg_ = 0;  // sm.tensor.ldmatrix_writeback_cycles_per_reg
  std::vector<Warp> warps_;
  std::vector<CtaSlot> ctas_;
  std::vector<SubPartition> sps_;
  std::array<Counter*, kNumSmCounters> ctr_{};
  uint64_t scheduled_cycle_ = kNever;  // the pending step event, if any
  bool in_step_ = false;
  uint64_t shared_free_ = 0, l1_free_ = 0;  // SM-wide pipes: next free cycle
  SharedPipe shared_pipe_;                  // the shared pipe's arbiter (arbitration other than fifo)
  uint64_t shared_event_ = kNever;          // cycle of its pending event
  uint32_t mio_blocked_ = 0;                // sub-partitions whose MIO queue is full (arbiter)
  uint64_t barrier_free_ = 0;               // the SM's barrier unit: next cycle it takes an arrival (sm.barrier)
  uint64_t last_activity_ = 0;
  uint64_t outstanding_stores_ = 0;
  std::vector<TmaCopy> tmas_;  // bulk copies in flight (slots reused: tma_free_)
  std::vector<uint32_t> tma_free_;
  uint32_t resident_ctas_ = 0, resident_warps_ = 0, next_sp_ = 0;
  uint64_t residency_since_ = 0;
  Sampler* sampler_ = nullptr;
  Timeline* timeline_ = nullptr;
  uint32_t sample_bra_ = ~0u, sample_loop_ = 0;  // the sampling loop's branch and loop (begin_kernel)
  bool record_warm_ = false;                     // record global accesses in the sampling loop
};

}  // namespace gtsim::gpu
