// Sampled simulation (docs/sampling.md): a launch's steady state is simulated until its timing
// converges, then fast-forwarded, and the skipped work's time and counters are extrapolated from the
// window that converged. Two kinds of skip, both taken when the whole machine is in a periodic steady
// state, so that the state at the moment of the skip stands for the state after it:
//
// - loop epochs: the machine full of CTAs; two windows whose running means (over the steady period)
//   of the machine's iteration rate and of the DRAM bytes per iteration of loop work agree; then
//   every slot skips the same time: each CTA the iterations its period fits (whole groups, a quantum
//   that keeps pipeline stages and mbarrier parities), and what a CTA has no room for (near its end,
//   in its prologue) its slot owes, paid by its next CTA once past its warm-up. The clock moves on
//   by that time, the counters of loop work (Counter::loop_value) by what an iteration adds, and
//   time-like counters by their rate. Prologues, the last iterations (`tail`) and epilogues are
//   always simulated. While two or more full turnovers are to come, windows wait for every CTA to be
//   inside the loop (turnover epochs skip the rest).
// - turnover epochs: when the CTA scheduler is about to start turnover k (CTA k * slots, `slots` the
//   CTAs resident at once), the spans of the two previous turnovers are compared; when they agree,
//   W whole turnovers are skipped (W * slots CTAs are counted done, the clock moves on by W spans and
//   the counters by W times the last turnover's). The last full turnover and the partial one are
//   always simulated.
//
// Skipped work leaves the caches as the simulated work before it left them (the same steady state),
// and the clock offset is added to the kernel's cycles. The estimated error is each epoch's
// convergence residual (the relative difference of its two windows) times the time it extrapolated.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "models/mem/memory_system.hpp"
#include "sim/simulation.hpp"

namespace gtsim::gpu {

class Sm;

// A byte range one instruction of a warp touched in an iteration (its lanes' accesses merged where
// they are adjacent: a row of a tile, whatever lines and sectors it falls on), and whether it stored.
// Ranges, not lines: a 64-byte k-slice that starts 16 bytes into a sector spans one line in one
// iteration and two in the next, so the lines an iteration touches vary while its ranges do not.
struct WarmAccess {
  uint64_t first = 0;  // first byte
  uint32_t bytes = 0;
  bool write = false;
};
// A warp's accesses in its last complete iteration (`base`) and how far each access moves per
// iteration (`step`, in bytes: a k-step of 64 bytes moves half a line): iteration `last + m`
// touches base[k] moved by m * step[k] bytes.
struct WarmStream {
  std::vector<WarmAccess> base;
  std::vector<int64_t> step;
  uint64_t skip = 0;  // iterations this warp skips (set by the sampler)
  uint32_t sm = 0;    // the SM it runs on
};

struct SamplingPolicy {
  bool exact = false;                   // --exact: no epochs
  uint32_t warmup_iterations = 4;       // per CTA, before its first window
  uint32_t window_iterations = 4;       // per CTA, per window (at least)
  uint32_t window_iterations_max = 32;  // windows that disagree double up to this
  uint32_t tail_iterations = 2;         // simulated after a skip, before the loop's end
  double tolerance = 0.01;              // two windows agree when their rates differ by at most this
  double dram_tolerance = 0.02;         // ... and the steady period's DRAM bytes per iteration by at most this
  double regime_change = 0.10;          // a window this far from the previous one starts a new steady period
};

struct SamplingReport {
  bool exact = true;
  double fraction_simulated = 1.0;  // warp instructions simulated / the launch's
  double estimated_error_pct = 0;
  uint64_t skipped_iterations = 0;  // CTA iterations of the sampling loop fast-forwarded
  uint64_t skipped_ctas = 0;
  uint64_t skipped_cycles = 0;
  double error_cycles = 0;  // the epochs' residuals times the cycles they extrapolated
  uint32_t loop_epochs = 0, turnover_epochs = 0;
  uint64_t warmed_lines = 0;  // L2 lines touched for skipped iterations
};

class Sampler {
 public:
  Sampler(StatGroup& stats_root, std::vector<Sm*> sms, uint32_t ctas_per_sm_max, mem::GpuMemorySystem& memory,
          uint64_t l2_bytes);
  void set_policy(const SamplingPolicy& p) { policy_ = p; }
  const SamplingPolicy& policy() const { return policy_; }

  void begin_kernel(const ir::Program& program, uint64_t ctas, uint32_t ctas_per_sm);
  // The kernel's report; cycles skipped so far is offset_cycles().
  SamplingReport end_kernel();
  uint64_t offset_cycles() const { return offset_; }
  // The sampling loop's backward branch (the SM reports its issue by warp 0 of a CTA), or ~0.
  uint32_t loop_branch() const { return loop_.exists && active_ ? loop_.bra : ~0u; }

  // SM hooks: warp 0 of the CTA in `slot` of SM `sm` passed the sampling loop's branch at `cycle`;
  // the CTA's warps have run `p` of the current run's `trip` iterations (a greedy scheduler lets
  // warp 0 run far ahead of the others, so the CTA's progress is its warps' mean, and its room
  // to skip is that of its furthest warp); a CTA starts or leaves a slot.
  struct CtaProgress {
    int64_t min = 0, max = 0;  // the least and the most iterations run by one of its warps
    double mean = 0;           // iterations run, averaged over its warps
  };
  void on_iteration(uint32_t sm, uint32_t slot, const CtaProgress& p, int64_t trip, uint64_t cycle);
  void on_cta_start(uint32_t sm, uint32_t slot);
  void on_cta_end(uint32_t sm, uint32_t slot);
  // CTA scheduler hook: CTA `next` is about to be placed at `cycle` with `resident` CTAs resident
  // and `remaining` not yet placed (next included). Returns how many CTAs to skip (counted done).
  uint64_t on_dispatch(uint64_t next, uint64_t remaining, uint64_t cycle);

 private:
  struct CtaRecord {
    bool live = false, in_loop = false;
    int64_t iter = 0, iter_max = 0, trip = 0;  // iter: the CTA's least advanced warp
    double mean = 0, mean_open = 0;            // mean iterations of its warps (now, at the window's open)
    uint64_t last = 0;                         // cycle of the latest boundary
    uint64_t last_open = 0;
    uint64_t serial = 0, serial_open = ~0ull;  // which CTA (start order), and the one at the window's open
    bool skipped = false;  // skipped once already: a skip takes effect at each warp's next iteration, so a
                           // second one before that would leave its warps at different iterations
    // Kept by the slot from one CTA to the next:
    double period = 0;               // cycles per iteration of the loop (its last CTA measured in a window)
    double debt = 0;                 // iterations of skipped time this slot still owes (paid by its next CTAs)
    double done = 0, done_open = 0;  // iterations of the slot's loop runs that ended (now, at the window's open)
  };
  struct Mark {
    uint64_t real_cycle = 0;
    std::vector<uint64_t> counters;
    uint64_t l2_valid = 0, l2_dirty = 0;
    mem::GpuMemorySystem::Queues queues;
  };
  uint64_t dram_bytes(const std::vector<uint64_t>& v) const;
  uint64_t turnover_epoch(size_t k, uint64_t h, uint64_t remaining);
  // Relative difference of two figures of the same kind (0 when both are negligible).
  static double residual(double a, double b, double floor);
  // How fast the HBM's backlog grew from `from` to `to`: ticks of backlog per tick of simulated time
  // (negative when it drains). Posted write-backs that the SMs never wait for can queue up faster
  // than the HBM drains them, at a steady rate; a skip over such a state must leave behind the
  // backlog the skipped work would have queued (the launch ends only when the HBM has drained it).
  // A growth that is not steady (the two windows or turnovers differ) is no steady state.
  // Whether the requests in flight grew from `from` to `to` by more than `tolerance` of the requests
  // issued between them: queues somewhere in the memory system (a slice, a link, the HBM) fill with
  // posted stores faster than they drain, and the counters at the HBM lag what the SMs did.
  static bool requests_pile_up(const mem::GpuMemorySystem::Queues& from, const mem::GpuMemorySystem::Queues& to,
                               double tolerance);
  static double backlog_rate(const mem::GpuMemorySystem::Queues& from, const mem::GpuMemorySystem::Queues& to);
  void check_loop(uint64_t cycle);
  void loop_epoch(uint64_t cycle, double rate, double residual, double growth, double queue_rate);
  // A CTA of a slot that owes skipped time skips what it can once past its warm-up.
  void pay_debt(size_t idx, uint64_t cycle);
  // Charges the iterations debts skipped since the first unsettled payment. They were CTAs of a later
  // turnover than the window that measured per_iteration_, and a later turnover may find in the L2
  // what the earlier one fetched (a GEMM's second wave rereads the first wave's B panels): its loop
  // work is charged with the mix per instruction that the simulated loop work showed since that payment
  // (DRAM bytes, hits, ... per instruction) times the instructions of one iteration (which do not
  // change). Settled at turnover marks, loop epochs and the kernel's end.
  void settle_debts();
  // Sets the DRAM read counters' bytes per iteration in `per` to `bytes_per_iteration` (what warming
  // fetched), split as `per` splits them.
  void dram_reads_from(std::vector<double>& per, double bytes_per_iteration) const;
  void reset_after_epoch(uint64_t cycle);
  std::vector<uint64_t> loop_snapshot() const;
  std::vector<uint64_t> snapshot(uint64_t cycle);
  // counter += (to - from) * num / den for every counter
  void extrapolate(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to, uint64_t num, uint64_t den);
  // counter += per[i] * n, rounded with a running remainder so that many small payments add up
  void add_rates(const std::vector<double>& per, double n);

  StatGroup& root_;
  std::vector<Sm*> sms_;
  uint32_t slots_per_sm_max_;
  SamplingPolicy policy_;
  // The L2 after a loop epoch holds what the skipped iterations would have left: the lines of the
  // last of them (as much as fits), touched in iteration order, no time or counters.
  // Returns the DRAM bytes the skipped reads would have fetched: the sectors warming found missing
  // (functional warming), scaled from the warmed iterations to all skipped ones.
  double warm(std::vector<WarmStream>& streams);
  mem::GpuMemorySystem& memory_;
  uint64_t l2_bytes_;
  bool active_ = false;
  ir::Program::SamplingLoop loop_;
  uint32_t ctas_per_sm_ = 0;
  uint64_t slots_ = 0, ctas_ = 0;
  std::shared_ptr<spdlog::logger> log_;  // --log-level debug: windows and marks; trace: every check
  std::vector<CtaRecord> rec_;           // [sm * slots_per_sm_max + slot]
  std::vector<Counter*> counters_;
  std::vector<size_t> inst_counters_;  // indices of the SMs' inst_executed counters
  std::vector<bool> sm_counter_;       // per counter: one of an SM's (the program's work, not the caches')
  uint64_t live_ = 0, started_ = 0;
  size_t pacer_ = 0;  // the record whose boundaries pace the windows
  // loop windows
  bool window_open_ = false;
  uint64_t window_cycle_ = 0;
  std::vector<uint64_t> window_counters_, window_loop_;
  uint64_t window_l2_valid_ = 0;
  mem::GpuMemorySystem::Queues window_queues_;
  double prev_queue_rate_ = 0;  // the previous window's backlog_rate
  uint32_t window_len_ = 4;     // iterations per CTA of the current window
  double prev_rate_ = 0;        // the previous window's iterations per cycle
  double prev_mean_rate_ = -1;  // the steady period's iterations per cycle at the previous window's close
  double steady_rate_sum_ = 0, steady_rate_cycles_ = 0;  // the period's window rates weighted by their cycles
  double prev_dram_ = 0;  // DRAM bytes per iteration over the steady period at the previous window's close (< 0: none)
  // the steady period: the windows since the timing last disagreed (counters and cycle at its start)
  std::vector<uint64_t> steady_counters_, steady_loop_;
  uint64_t steady_cycle_ = 0;
  std::vector<size_t> dram_counters_;       // indices of the DRAM byte counters
  std::vector<size_t> dram_read_counters_;  // ... of those that count reads
  uint64_t l2_lines_ = 0;                   // the L2's capacity in lines
  // per counter: what one iteration of loop work adds (from the last epoch), and rounding remainders
  std::vector<double> per_iteration_, remainder_;
  double debt_quantum_ = 1;               // debts are paid in whole skip quanta
  double unsettled_ = 0;                  // iterations debts skipped, not charged yet (settle_debts)
  double unsettled_fetch_ = 0;            // DRAM bytes their reads would have fetched (warm)
  size_t unsettled_unstreamed_ = 0;       // warps of theirs whose accesses warming could not stream
  std::vector<uint64_t> unsettled_loop_;  // loop work at the first unsettled payment
  // turnover marks (real cycle = cycle + offset at the time)
  std::vector<Mark> marks_;
  uint64_t offset_ = 0;
  double error_cycles_ = 0;
  uint64_t inst_before_ = 0, inst_added_ = 0;
  SamplingReport rep_;
};

}  // namespace gtsim::gpu
