#include "models/gpu/sampler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

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
  marks_.clear();
  offset_ = 0;
  error_cycles_ = 0;
  inst_added_ = 0;
  counters_.clear();
  root_.collect_counters(counters_);
  inst_counters_.clear();
  dram_counters_.clear();
  inst_before_ = 0;
  for (size_t i = 0; i < counters_.size(); ++i) {
    if (counters_[i]->name() == "inst_executed") {
      inst_counters_.push_back(i);
      inst_before_ += counters_[i]->value();
    }
    if (counters_[i]->name() == "dram_read_bytes" || counters_[i]->name() == "dram_write_bytes")
      dram_counters_.push_back(i);
  }
  l2_lines_ = active_ ? memory_.l2_occupancy().capacity : 0;
  log_->debug("kernel {}: {} CTAs, {} slots, sampling loop {} (branch {}, unroll {}, quantum {})", program.name(), ctas,
              slots_, loop_.exists ? int64_t(loop_.loop) : -1, loop_.exists ? int64_t(loop_.bra) : -1, loop_.unroll,
              loop_.quantum);
}

SamplingReport Sampler::end_kernel() {
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
    *counters_[i] += add;
    if (std::find(inst_counters_.begin(), inst_counters_.end(), i) != inst_counters_.end()) inst_added_ += add;
  }
}

void Sampler::on_cta_start(uint32_t sm, uint32_t slot) {
  if (!active_) return;
  rec_[size_t(sm) * slots_per_sm_max_ + slot] = CtaRecord{true};
  ++live_;
  ++started_;
}

void Sampler::on_cta_end(uint32_t sm, uint32_t slot) {
  if (!active_) return;
  rec_[size_t(sm) * slots_per_sm_max_ + slot].live = false;
  --live_;
}

void Sampler::on_iteration(uint32_t sm, uint32_t slot, const CtaProgress& p, int64_t trip, uint64_t cycle) {
  if (!active_) return;
  CtaRecord& r = rec_[size_t(sm) * slots_per_sm_max_ + slot];
  r.in_loop = p.max < trip;
  r.iter = p.min;
  r.iter_max = p.max;
  r.mean = p.mean;
  r.trip = trip;
  r.last = cycle;
  // Windows open and close at boundaries of one CTA (the live one in the lowest slot), so that a
  // window spans whole periods of the machine's steady state and its counters whole iterations.
  size_t idx = size_t(sm) * slots_per_sm_max_ + slot;
  if (!rec_[pacer_].live) pacer_ = idx;
  if (idx == pacer_) check_loop(cycle);
}

// Loop windows: every resident CTA inside the loop past its warm-up with room for a skip; a window
// closes once every CTA has run `window_iterations` in it; two windows that agree make an epoch.
void Sampler::check_loop(uint64_t cycle) {
  const int64_t q = int64_t(loop_.unroll) * loop_.quantum;
  const int64_t room = 2 + int64_t(policy_.tail_iterations) + q;
  auto reset = [&] {
    window_open_ = false;
    prev_rate_ = 0;
  };
  bool steady = live_ > 0 && (live_ == slots_ || started_ + rep_.skipped_ctas >= ctas_);
  for (const CtaRecord& r : rec_) {
    if (!r.live) continue;
    if (!r.in_loop || r.mean < double(policy_.warmup_iterations) || r.trip - r.iter_max < room) steady = false;
  }
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
    for (CtaRecord& r : rec_) r.mean_open = r.mean, r.last_open = r.last;
    window_counters_ = snapshot(cycle);
    window_cycle_ = cycle;
    window_l2_valid_ = memory_.l2_occupancy().valid;
    window_queues_ = memory_.queues();
    window_open_ = true;
  };
  if (!window_open_) return open();
  double rate = 0, iters = 0;
  for (const CtaRecord& r : rec_) {
    if (!r.live) continue;
    if (r.mean < r.mean_open) {  // a new run of the loop started
      window_len_ = policy_.window_iterations;
      return reset();
    }
    if (r.mean - r.mean_open < double(window_len_) || r.last <= r.last_open) return;
    rate += (r.mean - r.mean_open) / double(r.last - r.last_open);
    iters += r.mean - r.mean_open;
  }
  // The DRAM bytes per iteration must agree too: the timing can be steady while the traffic is not
  // (an L2 still filling with dirty lines writes nothing back yet). They are compared as a running
  // mean over the steady period (the windows since the timing last agreed), because CTAs that share
  // lines fetch them in turns, so one window's bytes swing around the mean long after its timing
  // has settled; the period's mean converges as it grows.
  std::vector<uint64_t> now = snapshot(cycle);
  double dram = double(dram_bytes(now) - dram_bytes(window_counters_)) / iters;
  const double rate_res = prev_rate_ > 0 ? residual(rate, prev_rate_, 0) : 1.0;
  if (rate_res > policy_.tolerance) {  // the steady period starts with this window
    steady_counters_ = window_counters_;
    steady_cycle_ = window_cycle_;
    for (CtaRecord& r : rec_) r.mean_steady = r.mean_open;
    prev_dram_ = -1;
  }
  double steady_iters = 0;
  for (const CtaRecord& r : rec_)
    if (r.live) steady_iters += r.mean - r.mean_steady;
  const double mean_dram = double(dram_bytes(now) - dram_bytes(steady_counters_)) / steady_iters;
  const double dram_res = prev_dram_ >= 0 ? residual(mean_dram, prev_dram_, 32.0) : 1.0;
  const double res = std::max(rate_res, dram_res);
  // The HBM's backlog: level, or growing at the previous window's rate (posted write-backs).
  const mem::GpuMemorySystem::Queues queues = memory_.queues();
  const double queue_rate = backlog_rate(window_queues_, queues);
  const bool queue_steady = !requests_pile_up(window_queues_, queues, policy_.tolerance) &&
                            (queue_rate <= policy_.tolerance ||
                             (prev_rate_ > 0 && std::abs(queue_rate - prev_queue_rate_) <= policy_.tolerance));
  log_->debug(
      "window c={} rate={:.6g} prev={:.6g} dram/it={:.1f} steady mean={:.1f} prev={:.1f} residual={:.4f} "
      "hbm backlog rate={:.4f} prev={:.4f} requests in flight={} (window open: {}) live={}",
      cycle, rate, prev_rate_, dram, mean_dram, prev_dram_, res, queue_rate, prev_queue_rate_,
      queues.requests_in_flight, window_queues_.requests_in_flight, live_);
  if (rate_res <= policy_.tolerance && dram_res <= policy_.dram_tolerance && queue_steady) {
    double growth = double(int64_t(memory_.l2_occupancy().valid) - int64_t(window_l2_valid_)) /
                    double(std::max<uint64_t>(1, cycle - window_cycle_));
    return loop_epoch(cycle, rate, res, growth, queue_rate > policy_.tolerance ? queue_rate : 0.0);
  }
  // Two windows that disagree: the next one is twice as long (up to a bound), so that traffic that
  // comes in bursts longer than a window (CTAs that share lines in the L2 fetch them in turns)
  // averages out instead of never converging.
  if (prev_rate_ > 0) window_len_ = std::min<uint32_t>(window_len_ * 2, policy_.window_iterations_max);
  prev_rate_ = rate;
  prev_dram_ = mean_dram;
  prev_queue_rate_ = queue_rate;
  open();
}

void Sampler::loop_epoch(uint64_t cycle, double rate, double residual, double growth, double queue_rate) {
  const int64_t q = int64_t(loop_.unroll) * loop_.quantum;
  // the time every CTA can skip: the least, over CTAs, of its skippable iterations times its period
  double span = -1;
  for (const CtaRecord& r : rec_) {
    if (!r.live) continue;
    double period = double(r.last - r.last_open) / (r.mean - r.mean_open);
    double t = double(r.trip - r.iter_max - 2 - int64_t(policy_.tail_iterations)) * period;
    span = span < 0 ? t : std::min(span, t);
  }
  // An L2 still filling must not fill up inside the skip: from then on it would write back, which the
  // window did not see. Skip at most until it is full; the warmed lines fill it.
  uint64_t valid = memory_.l2_occupancy().valid;
  if (growth > 0 && double(valid) + growth * span > 0.98 * double(l2_lines_) &&
      growth * double(cycle - window_cycle_) > 0.005 * double(l2_lines_))
    span = std::max(0.0, (0.98 * double(l2_lines_) - double(valid)) / growth);
  uint64_t skipped = 0;
  std::vector<WarmStream> streams;
  for (size_t i = 0; i < rec_.size(); ++i) {
    const CtaRecord& r = rec_[i];
    if (!r.live) continue;
    double period = double(r.last - r.last_open) / (r.mean - r.mean_open);
    int64_t n = int64_t(std::floor(span / period + 1e-9)) / q * q;
    if (n <= 0) continue;
    Sm& sm = *sms_[i / slots_per_sm_max_];
    uint32_t slot = uint32_t(i % slots_per_sm_max_);
    size_t first = streams.size();
    sm.warm_streams(slot, streams);
    for (size_t k = first; k < streams.size(); ++k) streams[k].skip = uint64_t(n);
    sm.skip_cta(slot, loop_.loop, n);
    skipped += uint64_t(n);
  }
  warm(streams);
  log_->debug("loop epoch c={}: every CTA skips {:.0f} cycles' worth, {} iterations in all", cycle, span, skipped);
  std::vector<uint64_t> now = snapshot(cycle);
  window_open_ = false;
  prev_rate_ = prev_dram_ = 0;
  if (skipped == 0) return;
  // the machine runs `rate` iterations a cycle in this steady state
  uint64_t cycles = uint64_t(std::llround(double(skipped) / rate));
  // the backlog the skipped time would have queued on the HBM, at the window's rate
  if (queue_rate > 0 && cycle > window_cycle_) {
    double ticks_per_cycle = double(memory_.queues().now - window_queues_.now) / double(cycle - window_cycle_);
    memory_.queue_hbm(Tick(std::llround(queue_rate * double(cycles) * ticks_per_cycle)));
  }
  // the counters at their mean rate over the steady period (its timing agreed window to window)
  extrapolate(steady_counters_, now, cycles, cycle - steady_cycle_);
  offset_ += cycles;
  error_cycles_ += residual * double(cycles);
  rep_.skipped_iterations += skipped;
  ++rep_.loop_epochs;
}

void Sampler::warm(std::vector<WarmStream>& streams) {
  uint64_t most = 0, lines_per_round = 0;
  for (const auto& s : streams) most = std::max(most, s.skip), lines_per_round += s.base.size();
  if (most == 0 || lines_per_round == 0) return;
  // iterations cur + 1 .. cur + skip are skipped; base is iteration cur - 1, so they are m = 2 .. skip + 1.
  // Only the last of them can still be in the L2: those whose lines fill it once and a quarter.
  uint64_t rounds = std::max<uint64_t>(1, (l2_bytes_ + l2_bytes_ / 4) / (lines_per_round * 128) + 1);
  uint64_t m0 = most > rounds ? most - rounds + 2 : 2;
  for (uint64_t m = m0; m <= most + 1; ++m)
    for (const auto& s : streams) {
      if (m > s.skip + 1) continue;
      for (size_t k = 0; k < s.base.size(); ++k) {
        const WarmAccess& a = s.base[k];
        uint64_t line = a.line + uint64_t(int64_t(m) * s.step[k]);
        for (uint32_t sec = 0; sec < 4; ++sec)
          if (a.sectors >> sec & 1) {
            uint32_t run = 1;
            while (sec + run < 4 && (a.sectors >> (sec + run) & 1)) ++run;
            memory_.preload_l2(line * 128 + sec * 32, run * 32, a.write);
            sec += run - 1;
          }
        ++rep_.warmed_lines;
      }
    }
}

// Turnover marks: the CTA scheduler reports the start of every turnover (CTA k * slots).
uint64_t Sampler::on_dispatch(uint64_t next, uint64_t remaining, uint64_t cycle) {
  if (!active_ || next % slots_ != 0) return 0;
  mem::GpuMemorySystem::L2Occupancy occ = memory_.l2_occupancy();
  marks_.push_back(Mark{cycle + offset_, snapshot(cycle), occ.valid, occ.dirty, memory_.queues()});
  size_t k = marks_.size() - 1;
  log_->debug("mark {} next={} real={} valid={} dirty={} hbm backlog={} ns, requests in flight {}", k, next,
              marks_[k].real_cycle, occ.valid, occ.dirty, marks_[k].queues.hbm_backlog / kTicksPerNs,
              marks_[k].queues.requests_in_flight);
  if (k < 2) return 0;
  const Mark &a = marks_[k - 2], &b = marks_[k - 1], &c = marks_[k];
  uint64_t t1 = b.real_cycle - a.real_cycle, t2 = c.real_cycle - b.real_cycle;
  if (t2 == 0) return 0;
  double d1 = double(dram_bytes(b.counters) - dram_bytes(a.counters));
  double d2 = double(dram_bytes(c.counters) - dram_bytes(b.counters));
  double res = std::max(residual(double(t1), double(t2), 0), residual(d1, d2, 32.0 * double(slots_)));
  uint64_t full = remaining / slots_;
  if (res > policy_.tolerance || full < 2) return 0;
  // The HBM's backlog per turnover: level, or growing by the same amount each turnover (posted
  // write-backs queue up behind a saturated HBM); the skipped turnovers leave theirs queued.
  const double span_ticks = double(c.queues.now - b.queues.now);
  const double q1 = double(b.queues.hbm_backlog) - double(a.queues.hbm_backlog),
               q2 = double(c.queues.hbm_backlog) - double(b.queues.hbm_backlog);
  const bool growing = q2 > policy_.tolerance * span_ticks;
  if (growing && std::abs(q2 - q1) > policy_.tolerance * span_ticks) return 0;
  if (requests_pile_up(b.queues, c.queues, policy_.tolerance)) return 0;
  uint64_t w = full - 1;  // the last full turnover and the partial one are simulated
  // An L2 still filling (more lines valid after each turnover) is skipped only until it is full, and
  // the lines the skipped turnovers would have left are put in it as placeholders (dirty as theirs).
  int64_t grow = int64_t(c.l2_valid) - int64_t(b.l2_valid), grow_dirty = int64_t(c.l2_dirty) - int64_t(b.l2_dirty);
  if (grow > int64_t(l2_lines_ / 200)) {
    uint64_t room = l2_lines_ > c.l2_valid ? l2_lines_ - c.l2_valid : 0;
    w = std::min<uint64_t>(w, room / uint64_t(grow));
    if (w == 0) return 0;
    memory_.fill_l2_placeholders(w * uint64_t(grow), w * uint64_t(std::max<int64_t>(0, grow_dirty)));
  }
  extrapolate(b.counters, c.counters, w, 1);
  if (growing) memory_.queue_hbm(Tick(w * uint64_t(q2)));
  offset_ += w * t2;
  error_cycles_ += res * double(w * t2);
  rep_.skipped_ctas += w * slots_;
  ++rep_.turnover_epochs;
  marks_.clear();
  return w * slots_;
}

}  // namespace gtsim::gpu
