// A Simulation owns its event queue, its components' stats tree and its watchdog. There are no
// globals: two Simulations on two threads give the same results as each alone.
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sim/error.hpp"
#include "sim/event_queue.hpp"
#include "sim/stats.hpp"
#include "sim/time.hpp"

namespace gtsim {

// Limits that end a run with a diagnostic instead of a hang. Every limit can be raised: the
// defaults come from RunLimits (below), which the command line sets from its --max-* flags.
struct WatchdogLimits {
  Tick max_tick = 10ull * 1000 * kTicksPerUs * 1000;  // 10 s of simulated time
  uint64_t max_events = 20'000'000'000ull;
  // No progress: this many consecutive events without the progress counter moving.
  uint64_t max_events_without_progress = 50'000'000ull;
  // Host (wall-clock) seconds since the limits were set (RunLimits::host_start); 0: none. Checked
  // every kHostCheckEvents events.
  double max_host_seconds = 0;
  std::chrono::steady_clock::time_point host_start = std::chrono::steady_clock::now();
};
inline constexpr uint64_t kHostCheckEvents = 1u << 16;

// The resource limits of a command, process-wide: every Simulation starts with them, and the models
// check the up-front estimates against them (models/gpu/footprint.hpp). Limits end a run with an
// error (a LimitError naming the limit, the value reached and the command-line flag that raises it);
// they never change a result. Set once, before simulations start (the CLI does it after parsing).
struct RunLimits {
  double max_sim_seconds = 10;              // --max-sim-seconds: simulated time of one machine
  uint64_t max_events = 20'000'000'000ull;  // --max-events: events of one machine
  double max_host_seconds = 0;              // --max-host-seconds: wall-clock seconds of the command; 0: none
  double max_memory_gib = 2;                // --max-memory-gib: estimated model state of one machine
  double max_warp_instructions = 1e12;      // --max-warp-instructions: estimated dynamic warp instructions of a launch
  std::chrono::steady_clock::time_point host_start = std::chrono::steady_clock::now();
  WatchdogLimits watchdog() const;
};
RunLimits run_limits();
// Installs `limits` (host_start: now) for every Simulation built from now on.
void set_run_limits(const RunLimits& limits);

// A resource limit was reached (or an up-front estimate is above one).
class LimitError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

class Simulation {
 public:
  explicit Simulation(std::unique_ptr<EventQueue> queue = nullptr);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  Tick now() const { return now_; }
  uint64_t events_processed() const { return events_; }

  // Schedules handler->handle_event(when, kind, arg). `when` must not be before now().
  void schedule(Tick when, EventHandler* handler, uint32_t kind = 0, uint64_t arg = 0, int32_t priority = 0);

  // Runs events until the queue is empty, `until` is passed, or a watchdog limit fires
  // (throws LimitError naming the limit, what was pending and the flag that raises it; SimulationError
  // when nothing progresses). Returns the final time.
  Tick run(Tick until = kTickMax);
  bool idle() const { return queue_->empty(); }

  // Components call this when they retire work (an instruction, a request); the watchdog's
  // no-progress check watches it.
  void note_progress(uint64_t n = 1) { progress_ += n; }
  uint64_t progress() const { return progress_; }

  // Optional description of what is waiting, used in watchdog diagnostics.
  void set_stall_reporter(std::function<std::string()> f) { stall_reporter_ = std::move(f); }

  WatchdogLimits& limits() { return limits_; }
  StatGroup& stats() { return stats_; }
  const StatGroup& stats() const { return stats_; }

 private:
  template <class Q>
  Tick run_on(Q& q, Tick until);
  [[noreturn]] void time_limit_reached();
  [[noreturn]] void no_progress();
  [[noreturn]] void event_limit_reached();
  [[noreturn]] void host_limit_reached(double seconds);

  std::unique_ptr<EventQueue> queue_;
  CalendarEventQueue* calendar_ = nullptr;  // queue_ when it is the default (calls without dispatch)
  StatGroup stats_;
  WatchdogLimits limits_;
  Tick now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_ = 0;
  uint64_t progress_ = 0;
  std::function<std::string()> stall_reporter_;
};

// One named spdlog logger per component (get-or-create: spdlog throws on duplicate names).
// Loggers are shared by name across simulations; they carry no simulation state.
std::shared_ptr<spdlog::logger> component_logger(const std::string& name);

// Base of every hardware block: a path in the hierarchy ("gpu.sm3.l1"), a stats group at that
// path, and a logger.
class Component : public EventHandler {
 public:
  Component(Simulation& sim, StatGroup& parent_stats, const std::string& name, const std::string& logger_name);
  ~Component() override = default;
  Simulation& sim() { return sim_; }
  StatGroup& stats() { return stats_; }
  spdlog::logger& log() { return *log_; }
  void handle_event(Tick, uint32_t, uint64_t) override {}

 protected:
  Simulation& sim_;
  StatGroup& stats_;
  std::shared_ptr<spdlog::logger> log_;
};

// Bandwidth as a server with a next-free time: a transfer of `bytes` arriving at `t` starts at
// max(t, next_free) and occupies the server for bytes / rate. No per-cycle ticking.
class BandwidthServer {
 public:
  BandwidthServer() = default;
  // bytes_per_ns: e.g. 4800 GB/s = 4800 bytes/ns.
  explicit BandwidthServer(double bytes_per_ns) { set_rate(bytes_per_ns); }
  void set_rate(double bytes_per_ns) { ps_per_byte_ = 1000.0 / bytes_per_ns; }
  // Reserves the server; returns the tick at which the transfer completes.
  Tick reserve(Tick arrival, uint64_t bytes) {
    Tick start = arrival > next_free_ ? arrival : next_free_;
    frac_ += double(bytes) * ps_per_byte_;
    Tick dur = Tick(frac_);
    frac_ -= double(dur);
    next_free_ = start + dur;
    busy_ += dur;
    queue_delay_ += start - arrival;
    return next_free_;
  }
  Tick next_free() const { return next_free_; }
  // Queues `extra` ticks of work at `now` behind what is queued (sampled simulation: the traffic of
  // skipped work that no one waits for, such as write-backs).
  void queue(Tick now, Tick extra) {
    next_free_ = (next_free_ > now ? next_free_ : now) + extra;
    busy_ += extra;
  }
  Tick busy_ticks() const { return busy_; }
  Tick queue_delay_ticks() const { return queue_delay_; }
  double bytes_per_ns() const { return 1000.0 / ps_per_byte_; }

 private:
  double ps_per_byte_ = 1.0;
  double frac_ = 0.0;  // carries sub-picosecond remainders so long streams keep the exact rate
  Tick next_free_ = 0;
  Tick busy_ = 0;
  Tick queue_delay_ = 0;
};

}  // namespace gtsim
