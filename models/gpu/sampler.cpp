#include "models/gpu/sampler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_set>

#include "models/gpu/sm.hpp"
#include "models/mem/memory_system.hpp"

namespace gtsim::gpu {

Sampler::Sampler(StatGroup& stats_root, std::vector<Sm*> sms, uint32_t ctas_per_sm_max, mem::GpuMemorySystem& memory,
                 uint64_t l2_bytes)
    : root_(stats_root),
      sms_(std::move(sms)),
      slots_per_sm_max_(ctas_per_sm_max),
      memory_(memory),
      l2_bytes_(l2_bytes),
      log_(component_logger("sampler")) {
  rec_.resize(sms_.size() * slots_per_sm_max_);
}

void Sampler::begin_kernel(const ir::Program& program, uint64_t ctas, uint32_t ctas_per_sm) {
  unsettled_ = unsettled_fetch_ = 0;
  rep_ = SamplingReport{};
  rep_.exact = policy_.exact;
  loop_ = program.sampling_loop();
  ctas_per_sm_ = ctas_per_sm;
  ctas_ = ctas;
  slots_ = std::min<uint64_t>(ctas, uint64_t(ctas_per_sm) * sms_.size());
  active_ = !policy_.exact && slots_ > 0;
  std::fill(rec_.begin(), rec_.end(), CtaRecord{});
  live_ = started_ = 0;
  pacer_ = 0;
  window_open_ = false;
  prev_rate_ = 0;
  window_len_ = policy_.window_iterations;
  debt_quantum_ = double(std::max<uint32_t>(1, loop_.unroll * loop_.quantum));
  marks_.clear();
  offset_ = 0;
  error_cycles_ = 0;
  inst_added_ = 0;
  counters_.clear();
  root_.collect_counters(counters_);
  inst_counters_.clear();
  dram_counters_.clear();
  dram_read_counters_.clear();
  inst_before_ = 0;
  std::vector<Counter*> of_sms;
  for (Sm* sm : sms_) sm->stats().collect_counters(of_sms);
  std::sort(of_sms.begin(), of_sms.end());
  sm_counter_.assign(counters_.size(), false);
  for (size_t i = 0; i < counters_.size(); ++i) {
    sm_counter_[i] = std::binary_search(of_sms.begin(), of_sms.end(), counters_[i]);
    if (counters_[i]->name() == "inst_executed") {
      inst_counters_.push_back(i);
      inst_before_ += counters_[i]->value();
    }
    if (counters_[i]->name() == "dram_read_bytes" || counters_[i]->name() == "dram_write_bytes")
      dram_counters_.push_back(i);
    if (counters_[i]->name() == "dram_read_bytes") dram_read_counters_.push_back(i);
  }
  l2_lines_ = active_ ? memory_.l2_occupancy().capacity : 0;
  per_iteration_.assign(counters_.size(), 0.0);
  remainder_.assign(counters_.size(), 0.0);
  log_->debug("kernel {}: {} CTAs, {} slots, sampling loop {} (branch {}, unroll {}, quantum {})", program.name(), ctas,
              slots_, loop_.exists ? int64_t(loop_.loop) : -1, loop_.exists ? int64_t(loop_.bra) : -1, loop_.unroll,
              loop_.quantum);
}

SamplingReport Sampler::end_kernel() {
  {
    Counter::LoopWork unattributed(false);
    settle_debts();
  }
  uint64_t inst = 0;
  for (size_t i : inst_counters_) inst += counters_[i]->value();
  inst -= inst_before_;
  rep_.skipped_cycles = offset_;
  rep_.error_cycles = error_cycles_;
  rep_.fraction_simulated = inst > 0 ? double(inst - std::min(inst, inst_added_)) / double(inst) : 1.0;
  active_ = false;
  return rep_;
}

uint64_t Sampler::dram_bytes(const std::vector<uint64_t>& v) const {
  uint64_t b = 0;
  for (size_t i : dram_counters_) b += v[i];
  return b;
}

double Sampler::residual(double a, double b, double floor) {
  double m = std::max(std::abs(a), std::abs(b));
  return m <= floor ? 0.0 : std::abs(a - b) / m;
}

bool Sampler::requests_pile_up(const mem::GpuMemorySystem::Queues& from, const mem::GpuMemorySystem::Queues& to,
                               double tolerance) {
  if (to.requests_in_flight <= from.requests_in_flight) return false;
  double issued = double(to.requests_issued - from.requests_issued);
  return double(to.requests_in_flight - from.requests_in_flight) > tolerance * std::max(1.0, issued);
}

double Sampler::backlog_rate(const mem::GpuMemorySystem::Queues& from, const mem::GpuMemorySystem::Queues& to) {
  if (to.now <= from.now) return 0;
  return (double(to.hbm_backlog) - double(from.hbm_backlog)) / double(to.now - from.now);
}

std::vector<uint64_t> Sampler::snapshot(uint64_t cycle) {
  for (Sm* sm : sms_) sm->flush_residency(cycle);
  std::vector<uint64_t> v(counters_.size());
  for (size_t i = 0; i < counters_.size(); ++i) v[i] = counters_[i]->value();
  return v;
}

void Sampler::extrapolate(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to, uint64_t num,
                          uint64_t den) {
  if (den == 0) return;
  for (size_t i = 0; i < counters_.size(); ++i) {
    if (to[i] <= from[i]) continue;
    unsigned __int128 d = (unsigned __int128)(to[i] - from[i]) * num;
    uint64_t add = uint64_t((d + den / 2) / den);
    counters_[i]->add_unattributed(add);
    if (std::find(inst_counters_.begin(), inst_counters_.end(), i) != inst_counters_.end()) inst_added_ += add;
  }
}

void Sampler::add_rates(const std::vector<double>& per, double n) {
  for (size_t i = 0; i < counters_.size(); ++i) {
    if (per[i] <= 0) continue;
    double want = per[i] * n + remainder_[i];
    // Saturates where a uint64_t would not hold it (a loop of 2^62 iterations fast-forwarded: the run
    // ends at the simulated-time limit right after, with a LimitError).
    constexpr double kMost = 9.0e18;
    uint64_t add = want >= kMost ? uint64_t(kMost) : uint64_t(std::max(0.0, std::floor(want)));
    remainder_[i] = want >= kMost ? 0.0 : want - double(add);
    counters_[i]->add_unattributed(add);
    if (std::find(inst_counters_.begin(), inst_counters_.end(), i) != inst_counters_.end()) inst_added_ += add;
  }
}

std::vector<uint64_t> Sampler::loop_snapshot() const {
  std::vector<uint64_t> v(counters_.size());
  for (size_t i = 0; i < counters_.size(); ++i) v[i] = counters_[i]->loop_value();
  return v;
}

void Sampler::on_cta_start(uint32_t sm, uint32_t slot) {
  if (!active_) return;
  CtaRecord& r = rec_[size_t(sm) * slots_per_sm_max_ + slot];
  CtaRecord fresh{true};
  fresh.period = r.period;  // the slot keeps its period, what it owes and its count of iterations
  fresh.debt = r.debt;
  fresh.done = r.done;
  fresh.done_open = r.done_open;
  fresh.serial = started_;
  r = fresh;
  ++live_;
  ++started_;
}

void Sampler::on_cta_end(uint32_t sm, uint32_t slot) {
  if (!active_) return;
  CtaRecord& r = rec_[size_t(sm) * slots_per_sm_max_ + slot];
  r.live = false;
  r.done += double(r.trip);  // its last run of the loop ran every iteration
  r.mean = 0;
  --live_;
}

void Sampler::on_iteration(uint32_t sm, uint32_t slot, const CtaProgress& p, int64_t trip, uint64_t cycle) {
  if (!active_) return;
  Counter::LoopWork unattributed(false);  // the sampler's own additions are no one's loop work
  const size_t idx = size_t(sm) * slots_per_sm_max_ + slot;
  CtaRecord& r = rec_[idx];
  if (p.mean + 1e-9 < r.mean) {  // a new run of the loop (a persistent CTA's next tile)
    r.done += double(r.trip);
  }
  r.in_loop = p.max < trip;
  r.iter = p.min;
  r.iter_max = p.max;
  r.mean = p.mean;
  r.trip = trip;
  r.last = cycle;
  if (r.debt >= debt_quantum_) pay_debt(idx, cycle);
  // Windows open and close at boundaries of one CTA (the live one in the lowest slot), so that a
  // window spans whole periods of the machine's steady state and its counters whole iterations.
  if (!rec_[pacer_].live) pacer_ = idx;
  if (idx == pacer_) check_loop(cycle);
}

// Loop windows: the machine full of CTAs (or every CTA placed) and no slot owing skipped time; a
// window closes once the machine has run `window_len_` iterations per CTA; two windows that agree
// on the machine's iteration rate, the DRAM bytes per iteration of loop work and the queues make an
// epoch. CTAs may start and end inside a window (a launch of many turnovers has CTAs at every point
// of their lives at once): the rate counts every slot's iterations, and the once-per-CTA work
// around the loop is no part of what is extrapolated (Counter::loop_value).
void Sampler::check_loop(uint64_t cycle) {
  auto reset = [&] {
    window_open_ = false;
    prev_rate_ = 0;
  };
  bool steady = live_ > 0 && (live_ == slots_ || started_ + rep_.skipped_ctas >= ctas_);
  // CTAs at different points of their lives (some in their prologue, warm-up or epilogue): while two
  // or more full turnovers are still to come, turnover epochs skip them whole, and loop windows wait
  // for a moment when every CTA is inside the loop; after that only loop epochs can skip.
  bool staggered = false;
  const int64_t q = int64_t(loop_.unroll) * loop_.quantum;
  for (const CtaRecord& r : rec_) {
    if (r.debt >= debt_quantum_) steady = false;
    if (r.live && (!r.in_loop || r.mean < double(policy_.warmup_iterations) ||
                   r.trip - r.iter_max < 2 + int64_t(policy_.tail_iterations) + q))
      staggered = true;
  }
  const uint64_t placed = started_ + rep_.skipped_ctas, to_place = ctas_ > placed ? ctas_ - placed : 0;
  if (staggered && to_place >= 2 * slots_) steady = false;
  if (log_->should_log(spdlog::level::trace)) {
    std::string d;
    for (const CtaRecord& r : rec_)
      if (r.live)
        d += " " + std::to_string(r.iter) + "-" + std::to_string(r.iter_max) + "/" + std::to_string(r.trip) +
             (r.in_loop ? "" : "x");
    log_->trace("check c={} steady={} live={} slots={}:{}", cycle, int(steady), live_, slots_, d);
  }
  if (!steady) return reset();
  auto open = [&] {
    for (CtaRecord& r : rec_)
      r.mean_open = r.mean, r.last_open = r.last, r.done_open = r.done, r.serial_open = r.live ? r.serial : ~0ull;
    window_counters_ = snapshot(cycle);
    window_loop_ = loop_snapshot();
    window_cycle_ = cycle;
    window_l2_valid_ = memory_.l2_occupancy().valid;
    window_queues_ = memory_.queues();
    window_open_ = true;
  };
  if (!window_open_) return open();
  // The machine's rate: each CTA's iterations over its own reports' span (a CTA reports once per
  // group of iterations, so the window's cycles would count a group too many or too few), and for a
  // slot whose CTA changed in the window, its iterations over the window's cycles.
  if (cycle <= window_cycle_) return;
  double iters = 0, rate = 0;
  for (const CtaRecord& r : rec_) {
    if (!r.live && r.serial_open == ~0ull) continue;
    const double d = (r.done + r.mean) - (r.done_open + r.mean_open);
    if (r.live && r.serial == r.serial_open) {
      if (r.mean - r.mean_open < double(window_len_) || r.last <= r.last_open) return;  // every CTA runs a window
      rate += d / double(r.last - r.last_open);
    } else {
      rate += d / double(cycle - window_cycle_);
    }
    iters += d;
  }
  if (iters < double(window_len_) * double(live_)) return;
  // Each CTA's own period (cycles per iteration), from those that ran the whole window in the loop;
  // a slot keeps its last one for the CTAs that follow.
  for (CtaRecord& r : rec_)
    if (r.live && r.serial == r.serial_open && r.in_loop && r.mean > r.mean_open + 1 && r.last > r.last_open)
      r.period = double(r.last - r.last_open) / (r.mean - r.mean_open);
  // The DRAM bytes per iteration of loop work must agree too: the timing can be steady while the
  // traffic is not (an L2 still filling with dirty lines writes nothing back yet). They are compared
  // as a running mean over the steady period (the windows since the timing last agreed), because
  // CTAs that share lines fetch them in turns, so one window's bytes swing around the mean long
  // after its timing has settled; the period's mean converges as it grows.
  std::vector<uint64_t> now = snapshot(cycle), now_loop = loop_snapshot();
  const double dram = double(dram_bytes(now_loop) - dram_bytes(window_loop_)) / double(cycle - window_cycle_) / rate;
  // The machine's rate is a running mean over the steady period too: with CTAs at every point of their
  // lives, a window's rate swings by a few percent with how many of them start or end in it, and the
  // period's mean is what converges. A window far from that mean (a prologue's ramp, a new phase)
  // starts a new period.
  if (prev_rate_ <= 0 || residual(rate, prev_rate_, 0) > policy_.regime_change) {
    // this window is a probe (the first, or after a change): the steady period starts at its close
    prev_rate_ = rate;
    prev_dram_ = -1;
    prev_mean_rate_ = -1;
    open();
    steady_counters_ = window_counters_;
    steady_loop_ = window_loop_;
    steady_cycle_ = window_cycle_;
    steady_rate_sum_ = steady_rate_cycles_ = 0;
    return;
  }
  steady_rate_sum_ += rate * double(cycle - window_cycle_);
  steady_rate_cycles_ += double(cycle - window_cycle_);
  const double mean_rate = steady_rate_sum_ / steady_rate_cycles_;
  const double rate_res = prev_mean_rate_ > 0 ? residual(mean_rate, prev_mean_rate_, 0) : 1.0;
  const double mean_dram =
      double(dram_bytes(now_loop) - dram_bytes(steady_loop_)) / double(cycle - steady_cycle_) / mean_rate;
  const double dram_res = prev_dram_ >= 0 ? residual(mean_dram, prev_dram_, 32.0) : 1.0;
  const double res = std::max(rate_res, dram_res);
  // The HBM's backlog: level, or growing at the previous window's rate (posted write-backs).
  const mem::GpuMemorySystem::Queues queues = memory_.queues();
  const double queue_rate = backlog_rate(window_queues_, queues);
  const bool queue_steady = !requests_pile_up(window_queues_, queues, policy_.tolerance) &&
                            (queue_rate <= policy_.tolerance ||
                             (prev_rate_ > 0 && std::abs(queue_rate - prev_queue_rate_) <= policy_.tolerance));
  log_->debug(
      "window c={} rate={:.6g} prev={:.6g} mean={:.6g} dram/it={:.1f} steady mean={:.1f} prev={:.1f} residual={:.4f} "
      "hbm backlog rate={:.4f} prev={:.4f} requests in flight={} (window open: {}) live={}",
      cycle, rate, prev_rate_, mean_rate, dram, mean_dram, prev_dram_, res, queue_rate, prev_queue_rate_,
      queues.requests_in_flight, window_queues_.requests_in_flight, live_);
  if (rate_res <= policy_.tolerance && dram_res <= policy_.dram_tolerance && queue_steady) {
    double growth = double(int64_t(memory_.l2_occupancy().valid) - int64_t(window_l2_valid_)) /
                    double(std::max<uint64_t>(1, cycle - window_cycle_));
    return loop_epoch(cycle, mean_rate, res, growth, queue_rate > policy_.tolerance ? queue_rate : 0.0);
  }
  // Two windows that disagree: the next one is twice as long (up to a bound), so that traffic that
  // comes in bursts longer than a window (CTAs that share lines in the L2 fetch them in turns)
  // averages out instead of never converging.
  if (prev_rate_ > 0) window_len_ = std::min<uint32_t>(window_len_ * 2, policy_.window_iterations_max);
  prev_rate_ = rate;
  prev_mean_rate_ = mean_rate;
  prev_dram_ = mean_dram;
  prev_queue_rate_ = queue_rate;
  open();
}

// Every slot skips the same time S. A CTA with room for S / period iterations skips them now; one
// without (near its end, in its prologue or warm-up, or in its epilogue) skips what it has, and its
// slot owes the rest: the slot's next CTA skips it once past its warm-up (pay_debt), which puts that
// CTA where it would have been (its slot's prologue and epilogue are simulated, in their turn). The
// clock moves on by S, the time-like counters by their rate over S, and the counters of loop work
// by what one iteration adds (over the steady period) times the iterations skipped.
void Sampler::loop_epoch(uint64_t cycle, double rate, double residual, double growth, double queue_rate) {
  settle_debts();  // at the rates of the period before this one
  const int64_t q = int64_t(loop_.unroll) * loop_.quantum;
  const int64_t keep = 2 + int64_t(policy_.tail_iterations);  // iterations a CTA always runs before its loop's end
  // the period of a CTA whose slot has none yet: the machine's mean
  double mean_period = 0, measured = 0;
  for (const CtaRecord& r : rec_)
    if (r.live && r.period > 0) mean_period += r.period, measured += 1;
  if (measured == 0) return reset_after_epoch(cycle);
  mean_period /= measured;
  struct Plan {
    size_t idx;
    double period, room;  // room: iterations it may skip now
  };
  std::vector<Plan> plan;
  double s_nowrap = -1, s_wrap = -1;
  std::vector<double> wraps;  // the time at which each CTA would run out of room
  for (size_t i = 0; i < rec_.size(); ++i) {
    const CtaRecord& r = rec_[i];
    if (!r.live) continue;
    const double period = r.period > 0 ? r.period : mean_period;
    const bool can = r.in_loop && r.mean >= double(policy_.warmup_iterations);
    // A record is as old as the CTA's last report (one per unroll group of warp 0's): two groups of slack,
    // so that no warp reaches the loop's end before its skip takes effect
    const double room = can ? double(std::max<int64_t>(0, r.trip - r.iter_max - keep - 2 * q)) : 0.0;
    // what a next CTA of the slot can take: its loop less its warm-up and the iterations kept
    const double next = double(std::max<int64_t>(0, r.trip - int64_t(policy_.warmup_iterations) - keep - q));
    plan.push_back({i, period, room});
    s_nowrap = s_nowrap < 0 ? room * period : std::min(s_nowrap, room * period);
    s_wrap = s_wrap < 0 ? (room + next) * period : std::min(s_wrap, (room + next) * period);
    wraps.push_back(room * period);
  }
  // a slot that runs out of room inside S needs a CTA after it: no more wraps than CTAs left to place
  const uint64_t left = ctas_ > started_ + rep_.skipped_ctas ? ctas_ - started_ - rep_.skipped_ctas : 0;
  if (left < wraps.size()) {
    std::sort(wraps.begin(), wraps.end());
    s_wrap = std::min(s_wrap, wraps[size_t(left)]);
  }
  double span = s_nowrap >= 0.5 * s_wrap ? s_nowrap : s_wrap;
  // An L2 still filling must not fill up inside the skip: from then on it would write back, which the
  // window did not see. Skip at most until it is full; the warmed lines fill it.
  uint64_t valid = memory_.l2_occupancy().valid;
  if (growth > 0 && double(valid) + growth * span > 0.98 * double(l2_lines_) &&
      growth * double(cycle - window_cycle_) > 0.005 * double(l2_lines_))
    span = std::max(0.0, (0.98 * double(l2_lines_) - double(valid)) / growth);
  // whole cycles, and at least one quantum for the fastest CTA
  span = std::floor(span);
  double fastest = 0;
  for (const Plan& p : plan) fastest = std::max(fastest, span / p.period);
  if (fastest < double(q)) return reset_after_epoch(cycle);
  // per-iteration rates of loop work and per-cycle rates of time-like counters, over the steady period
  std::vector<uint64_t> now = snapshot(cycle), now_loop = loop_snapshot();
  // (the machine's iterations come from each CTA's own reports, one per group of iterations: a count
  // at one cycle is stale by up to a group per CTA, so the rate, timed CTA by CTA, is the denominator)
  const double steady_cycles = double(cycle - steady_cycle_);
  std::vector<double> per_cycle(counters_.size(), 0.0);
  for (size_t i = 0; i < counters_.size(); ++i) {
    per_iteration_[i] = 0;
    if (counters_[i]->time_like())
      per_cycle[i] = now[i] > steady_counters_[i] ? double(now[i] - steady_counters_[i]) / steady_cycles : 0.0;
    else if (now_loop[i] > steady_loop_[i] && rate > 0)  // per cycle over the machine's iterations per cycle
      per_iteration_[i] = double(now_loop[i] - steady_loop_[i]) / steady_cycles / rate;
  }
  uint64_t skipped = 0;
  double owed = 0, dropped = 0;
  size_t unstreamed = 0;
  std::vector<WarmStream> streams;
  for (const Plan& p : plan) {
    CtaRecord& r = rec_[p.idx];
    const double want = span / p.period;
    int64_t n = std::max<int64_t>(0, int64_t(std::floor(std::min(want, p.room) + 1e-9)) / q * q);
    // What it cannot skip now its slot owes, unless it is less than a quantum: that part of the span
    // (a fraction of an iteration per CTA) is taken off the clock's move instead, on average
    if (want - double(n) >= double(q) || !(r.in_loop && r.mean >= double(policy_.warmup_iterations))) {
      r.debt += want - double(n);
      owed += want - double(n);
    } else {
      dropped += (want - double(n)) * p.period;
    }
    if (n <= 0) continue;
    r.skipped = true;  // what it still owes is its slot's next CTA's to pay
    log_->debug("slot {} (CTA {}, iterations {}-{} of {}) skips {}, owes {:.1f}", p.idx, r.serial, r.iter, r.iter_max,
                r.trip, n, r.debt);
    Sm& sm = *sms_[p.idx / slots_per_sm_max_];
    uint32_t slot = uint32_t(p.idx % slots_per_sm_max_);
    size_t first = streams.size();
    unstreamed += sm.warm_streams(slot, streams);
    for (size_t k = first; k < streams.size(); ++k) streams[k].skip = uint64_t(n);
    sm.skip_cta(slot, loop_.loop, n);
    skipped += uint64_t(n);
  }
  const double fetched = warm(streams);
  const uint64_t cycles = uint64_t(std::llround(span - dropped / double(plan.size())));
  log_->debug("loop epoch c={}: every slot skips {} cycles, {} iterations now, {:.0f} owed (machine rate {:.4g}/cycle)",
              cycle, cycles, skipped, owed, rate);
  // the backlog the skipped time would have queued on the HBM, at the window's rate
  if (queue_rate > 0 && cycle > window_cycle_) {
    double ticks_per_cycle = double(memory_.queues().now - window_queues_.now) / double(cycle - window_cycle_);
    memory_.queue_hbm(Tick(std::llround(queue_rate * double(cycles) * ticks_per_cycle)));
  }
  for (size_t i = 0; i < counters_.size(); ++i)
    if (per_cycle[i] > 0) counters_[i]->add_unattributed(uint64_t(std::llround(per_cycle[i] * double(cycles))));
  // DRAM reads: what warming the skipped iterations' lines found missing, when every skipping warp's
  // accesses were streamed. The window's bytes per iteration are the machine's mean, and CTAs that run
  // at different speeds read different shares: under a greedy scheduler one CTA of an SM runs ahead and
  // fetches the operands the other then hits on; a skip of equal time gives the slow CTAs a larger share
  // of the skipped iterations than of the window's, and the mean charged them the fast CTAs' misses
  // (gemm_tiled M=512 N=1408 K=3072 on 8 SMs: DRAM reads 8.4% above exact).
  std::vector<double> per = per_iteration_;
  if (unstreamed == 0 && skipped > 0) dram_reads_from(per, fetched / double(skipped));
  add_rates(per, double(skipped));
  offset_ += cycles;
  error_cycles_ += residual * double(cycles);
  rep_.skipped_iterations += skipped;
  ++rep_.loop_epochs;
  reset_after_epoch(cycle);
}

void Sampler::reset_after_epoch(uint64_t) {
  window_open_ = false;
  prev_rate_ = prev_dram_ = 0;
  window_len_ = policy_.window_iterations;
}

void Sampler::pay_debt(size_t idx, uint64_t) {
  CtaRecord& r = rec_[idx];
  const int64_t q = int64_t(loop_.unroll) * loop_.quantum;
  const int64_t keep = 2 + int64_t(policy_.tail_iterations);
  if (r.skipped || !r.in_loop || r.mean < double(policy_.warmup_iterations)) return;
  const double room = double(std::max<int64_t>(0, r.trip - r.iter_max - keep - q));  // its own report: one group
  int64_t n = int64_t(std::floor(std::min(r.debt, room) + 1e-9)) / q * q;
  if (n <= 0) return;
  Sm& sm = *sms_[idx / slots_per_sm_max_];
  const uint32_t slot = uint32_t(idx % slots_per_sm_max_);
  std::vector<WarmStream> streams;
  const size_t unstreamed = sm.warm_streams(slot, streams);
  for (WarmStream& st : streams) st.skip = uint64_t(n);
  sm.skip_cta(slot, loop_.loop, n);
  log_->debug("slot {} (CTA {}, iterations {}-{} of {}) pays {} of {:.1f} owed", idx, r.serial, r.iter, r.iter_max,
              r.trip, n, r.debt);
  r.skipped = true;
  const double fetched = warm(streams);
  if (unsettled_ == 0) unsettled_loop_ = loop_snapshot(), unsettled_fetch_ = 0, unsettled_unstreamed_ = 0;
  unsettled_ += double(n);
  unsettled_fetch_ += fetched;
  unsettled_unstreamed_ += unstreamed;
  r.debt -= double(n);
  rep_.skipped_iterations += uint64_t(n);
}

void Sampler::dram_reads_from(std::vector<double>& per, double bytes_per_iteration) const {
  double mix = 0;
  for (size_t i : dram_read_counters_) mix += per[i];
  for (size_t i : dram_read_counters_)
    per[i] = (mix > 0 ? per[i] / mix : 1.0 / double(dram_read_counters_.size())) * bytes_per_iteration;
}

void Sampler::settle_debts() {
  if (unsettled_ <= 0) return;
  const std::vector<uint64_t> now = loop_snapshot();
  double inst = 0, inst_per_iteration = 0;
  for (size_t i : inst_counters_) inst += double(now[i] - unsettled_loop_[i]), inst_per_iteration += per_iteration_[i];
  std::vector<double> per = per_iteration_;
  // The SMs' counters (FLOPs, thread instructions, shared and global requests) are the program's: an
  // iteration adds what the window measured. The memory system's depend on what the L2 holds, which a
  // later turnover may find warmer: the mix per instruction since the first payment. (Taking the mix for
  // the SMs' counters too made FLOPs 4% high: the loop work since a payment is mostly the payers' last
  // iterations, which issue no loads, so FLOPs per instruction there exceed the loop's.)
  if (inst > 0 && inst_per_iteration > 0)
    for (size_t i = 0; i < counters_.size(); ++i)
      if (!counters_[i]->time_like() && !sm_counter_[i])
        per[i] = double(now[i] - unsettled_loop_[i]) / inst * inst_per_iteration;
  // DRAM reads: what warming their lines found missing. The mix since the first payment does not know
  // them: a payment warms at once lines its skipped time would have read over a span in which older
  // CTAs, still running, read some of them first (a GEMM's second turnover warms the B slices the
  // first turnover's last iterations are about to read): those CTAs hit where they would have missed,
  // and the payer's own mix has them as hits (the first turnover had fetched them).
  double mix_reads = 0;
  for (size_t i : dram_read_counters_) mix_reads += per[i];
  if (unsettled_unstreamed_ == 0) dram_reads_from(per, unsettled_fetch_ / unsettled_);
  log_->debug(
      "settle {:.0f} iterations skipped by debts over {:.0f} loop instructions since the first payment: "
      "{:.1f} DRAM read bytes per iteration by their mix, {:.1f} by warming",
      unsettled_, inst, mix_reads, unsettled_fetch_ / unsettled_);
  add_rates(per, unsettled_);
  unsettled_ = 0;
}

double Sampler::warm(std::vector<WarmStream>& streams) {
  uint64_t most = 0, lines_per_round = 0;
  for (const auto& s : streams) most = std::max(most, s.skip), lines_per_round += s.base.size();
  if (most == 0 || lines_per_round == 0) return 0;
  // iterations cur + 1 .. cur + skip are skipped; base is iteration cur - 1, so they are m = 2 .. skip + 1.
  // Only the last of them can still be in the L2: those whose lines fill it once and a quarter. CTAs
  // share lines (a GEMM's CTAs of one tile row read the same A panel) and an access may be half a
  // line, so a round's footprint is its distinct lines.
  std::unordered_set<uint64_t> distinct;
  for (const auto& s : streams)
    for (const WarmAccess& a : s.base)
      for (uint64_t line = a.first >> 7; line <= (a.first + a.bytes - 1) >> 7; ++line) distinct.insert(line);
  uint64_t rounds = std::max<uint64_t>(1, (l2_bytes_ + l2_bytes_ / 4) / (distinct.size() * 128) + 1);
  uint64_t m0 = most > rounds ? most - rounds + 2 : 2;
  log_->debug("warm: {} streams, {} distinct lines per iteration, iterations {}..{}", streams.size(), distinct.size(),
              m0, most + 1);
  uint64_t fetched = 0;
  for (uint64_t m = m0; m <= most + 1; ++m)
    for (const auto& s : streams) {
      if (m > s.skip + 1) continue;
      for (size_t k = 0; k < s.base.size(); ++k) {
        const WarmAccess& a = s.base[k];
        const uint64_t from = a.first + uint64_t(int64_t(m) * s.step[k]);
        fetched += memory_.warm_l2(from, a.bytes, a.write, s.sm);
        rep_.warmed_lines += ((from + a.bytes - 1) >> 7) - (from >> 7) + 1;
      }
    }
  // iterations before m0 (whose lines the later ones evict again) fetch as the warmed ones did
  return double(fetched) * double(most) / double(most + 2 - m0);
}

// Turnover marks: the CTA scheduler reports the start of every turnover (CTA k * slots).
uint64_t Sampler::on_dispatch(uint64_t next, uint64_t remaining, uint64_t cycle) {
  if (!active_ || next % slots_ != 0) return 0;
  Counter::LoopWork unattributed(false);
  settle_debts();
  mem::GpuMemorySystem::L2Occupancy occ = memory_.l2_occupancy();
  marks_.push_back(Mark{cycle + offset_, snapshot(cycle), occ.valid, occ.dirty, memory_.queues()});
  size_t k = marks_.size() - 1;
  log_->debug("mark {} next={} real={} valid={} dirty={} dram={} B, hbm backlog={} ns, requests in flight {}", k, next,
              marks_[k].real_cycle, occ.valid, occ.dirty, dram_bytes(marks_[k].counters),
              marks_[k].queues.hbm_backlog / kTicksPerNs, marks_[k].queues.requests_in_flight);
  if (k < 2) return 0;
  for (const CtaRecord& r : rec_)  // slots that still owe skipped time are not in a periodic state yet
    if (r.debt >= debt_quantum_) return 0;
  // The last turnover against the one before; where single turnovers differ by more than the tolerance
  // (an L2 whose sets hold lines and far lines' copies in a pattern that repeats over several
  // turnovers), the last half of the turnovers since the L2 stopped filling against the half before.
  size_t steady = k;
  while (steady > 1 && marks_[steady].l2_valid <= marks_[steady - 1].l2_valid + l2_lines_ / 200) --steady;
  const uint64_t span = (k - steady) / 2;
  uint64_t w = turnover_epoch(k, 1, remaining);
  if (w == 0 && span >= 2) w = turnover_epoch(k, span, remaining);
  if (w == 0) return 0;
  marks_.clear();
  return w * slots_;
}

// Marks k - 2h, k - h and k: the two spans of h turnovers agree on time and DRAM bytes within the
// tolerance, the HBM's and the crossbar's queues are steady: skips the full turnovers that remain
// but one at the last span's mean. Returns the turnovers skipped (0: none).
uint64_t Sampler::turnover_epoch(size_t k, uint64_t h, uint64_t remaining) {
  const Mark &a = marks_[k - 2 * h], &b = marks_[k - h], &c = marks_[k];
  uint64_t t1 = b.real_cycle - a.real_cycle, t2 = c.real_cycle - b.real_cycle;
  if (t2 == 0) return 0;
  double d1 = double(dram_bytes(b.counters) - dram_bytes(a.counters));
  double d2 = double(dram_bytes(c.counters) - dram_bytes(b.counters));
  double res = std::max(residual(double(t1), double(t2), 0), residual(d1, d2, 32.0 * double(slots_ * h)));
  uint64_t full = remaining / slots_;
  if (res > policy_.tolerance || full < 2) return 0;
  // The HBM's backlog per span: level, or growing by the same amount each span (posted write-backs
  // queue up behind a saturated HBM); the skipped turnovers leave theirs queued.
  const double span_ticks = double(c.queues.now - b.queues.now);
  const double q1 = double(b.queues.hbm_backlog) - double(a.queues.hbm_backlog),
               q2 = double(c.queues.hbm_backlog) - double(b.queues.hbm_backlog);
  const bool growing = q2 > policy_.tolerance * span_ticks;
  if (growing && std::abs(q2 - q1) > policy_.tolerance * span_ticks) return 0;
  if (requests_pile_up(b.queues, c.queues, policy_.tolerance)) return 0;
  uint64_t w = full - 1;  // the last full turnover and the partial one are simulated
  // An L2 still filling (more lines valid after each turnover) is skipped only until it is full, and
  // the lines the skipped turnovers would have left are put in it as placeholders (dirty as theirs).
  int64_t grow = (int64_t(c.l2_valid) - int64_t(b.l2_valid)) / int64_t(h),
          grow_dirty = (int64_t(c.l2_dirty) - int64_t(b.l2_dirty)) / int64_t(h);
  if (grow > int64_t(l2_lines_ / 200)) {
    uint64_t room = l2_lines_ > c.l2_valid ? l2_lines_ - c.l2_valid : 0;
    w = std::min<uint64_t>(w, room / uint64_t(grow));
    if (w == 0) return 0;
    memory_.fill_l2_placeholders(w * uint64_t(grow), w * uint64_t(std::max<int64_t>(0, grow_dirty)));
  }
  extrapolate(b.counters, c.counters, w, h);
  if (growing) memory_.queue_hbm(Tick(w * uint64_t(q2) / h));
  const uint64_t skipped = (w * t2 + h / 2) / h;
  offset_ += skipped;
  error_cycles_ += res * double(skipped);
  rep_.skipped_ctas += w * slots_;
  ++rep_.turnover_epochs;
  return w;
}

}  // namespace gtsim::gpu
