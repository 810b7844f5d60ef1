// The CTA scheduler: places a kernel's CTAs on SMs breadth-first (the least-loaded SM first,
// lowest id on ties) up to the occupancy limit, and refills SMs as CTAs leave. Departures at the
// same tick are gathered into one dispatch pass (an event that runs after everything else at
// that tick), so SMs that free up together are refilled breadth-first too.
#pragma once

#include <cstdint>
#include <vector>

#include "models/gpu/sm.hpp"

namespace gtsim::gpu {

class CtaScheduler final : public Component, public CtaListener {
 public:
  CtaScheduler(Simulation& sim, StatGroup& parent, const ClockDomain& clock);
  // The SMs it dispatches to (built after the scheduler, since each SM reports to it).
  void set_sms(std::vector<Sm*> sms) { sms_ = std::move(sms); }
  // Sampled simulation: told of every placement, it may skip whole turnovers (models/gpu/sampler.hpp).
  void set_sampler(Sampler* s) { sampler_ = s; }

  // Starts a kernel of `ctas` CTAs, `ctas_per_sm` at most per SM; each CTA starts issuing
  // `dispatch_cycles` after it is placed. The first pass runs at `start_cycle`.
  void begin_kernel(uint64_t ctas, uint32_t ctas_per_sm, uint32_t dispatch_cycles, uint64_t start_cycle);
  bool all_done() const { return done_ == total_; }
  uint64_t done() const { return done_; }
  uint64_t dispatched() const { return next_; }

  void on_cta_exit(uint32_t sm, uint64_t cycle) override;
  void handle_event(Tick now, uint32_t kind, uint64_t arg) override;

 private:
  void dispatch_pass(uint64_t cycle);

  const ClockDomain& clock_;
  std::vector<Sm*> sms_;
  uint64_t total_ = 0, next_ = 0, done_ = 0;
  uint32_t ctas_per_sm_ = 0, dispatch_cycles_ = 0;
  uint64_t pass_cycle_ = 0;
  bool pass_pending_ = false;
  Counter& dispatched_ctr_;
  Sampler* sampler_ = nullptr;
};

}  // namespace gtsim::gpu
