#include "models/gpu/cta_scheduler.hpp"

#include <algorithm>

namespace gtsim::gpu {

namespace {
constexpr int32_t kAfterEverything = 1000;  // a dispatch pass runs after all other events of its tick
}

CtaScheduler::CtaScheduler(Simulation& sim, StatGroup& parent, const ClockDomain& clock)
    : Component(sim, parent, "cta_scheduler", "gpu.cta_scheduler"),
      clock_(clock),
      dispatched_ctr_(stats_.counter("ctas_dispatched", "CTAs placed on SMs", "CTAs")) {}

void CtaScheduler::begin_kernel(uint64_t ctas, uint32_t ctas_per_sm, uint32_t dispatch_cycles, uint64_t start_cycle) {
  total_ = ctas;
  next_ = done_ = 0;
  ctas_per_sm_ = ctas_per_sm;
  dispatch_cycles_ = dispatch_cycles;
  pass_cycle_ = start_cycle;
  pass_pending_ = true;
  sim_.schedule(clock_.cycle_start(start_cycle), this, 0, 0, kAfterEverything);
}

void CtaScheduler::on_cta_exit(uint32_t, uint64_t cycle) {
  ++done_;
  if (next_ == total_) return;
  if (pass_pending_ && pass_cycle_ <= cycle) return;
  pass_pending_ = true;
  pass_cycle_ = cycle;
  sim_.schedule(std::max(clock_.cycle_start(cycle), sim_.now()), this, 0, 0, kAfterEverything);
}

void CtaScheduler::handle_event(Tick, uint32_t, uint64_t) {
  if (!pass_pending_) return;
  pass_pending_ = false;
  dispatch_pass(pass_cycle_);
}

// Breadth-first: each CTA goes to the SM with the fewest resident CTAs that has room.
void CtaScheduler::dispatch_pass(uint64_t cycle) {
  while (next_ < total_) {
    Sm* best = nullptr;
    for (Sm* sm : sms_) {
      uint32_t r = sm->resident_ctas();
      if (r < ctas_per_sm_ && (!best || r < best->resident_ctas())) best = sm;
      if (best && best->resident_ctas() == 0) break;
    }
    if (!best) return;
    if (sampler_) {  // skipped CTAs count as done: their time and counters are extrapolated
      uint64_t skip = sampler_->on_dispatch(next_, total_ - next_, cycle);
      next_ += skip;
      done_ += skip;
    }
    best->launch_cta(next_++, cycle + dispatch_cycles_);
    ++dispatched_ctr_;
  }
}

}  // namespace gtsim::gpu
