#include "sim/simulation.hpp"

#include <mutex>
#include <sstream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "sim/error.hpp"

namespace gtsim {

namespace {
std::mutex g_limits_mutex;
RunLimits g_limits;

std::string seconds_text(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}
}  // namespace

WatchdogLimits RunLimits::watchdog() const {
  WatchdogLimits w;
  // Saturates: a limit beyond what a Tick holds is no limit.
  double ticks = max_sim_seconds * double(kTicksPerUs) * 1e6;
  w.max_tick = ticks >= double(kTickMax) ? kTickMax : Tick(ticks);
  w.max_events = max_events;
  w.max_host_seconds = max_host_seconds;
  w.host_start = host_start;
  return w;
}

RunLimits run_limits() {
  std::lock_guard<std::mutex> lock(g_limits_mutex);
  return g_limits;
}

void set_run_limits(const RunLimits& limits) {
  std::lock_guard<std::mutex> lock(g_limits_mutex);
  g_limits = limits;
  g_limits.host_start = std::chrono::steady_clock::now();
}

Simulation::Simulation(std::unique_ptr<EventQueue> queue) : queue_(std::move(queue)), limits_(run_limits().watchdog()) {
  if (!queue_) {
    auto q = std::make_unique<CalendarEventQueue>();
    calendar_ = q.get();
    queue_ = std::move(q);
  }
}

void Simulation::schedule(Tick when, EventHandler* handler, uint32_t kind, uint64_t arg, int32_t priority) {
  if (when < now_) [[unlikely]] {
    std::ostringstream os;
    os << "event scheduled in the past: at tick " << when << " while now is " << now_;
    throw SimulationError(os.str());
  }
  Event e{when, priority, seq_++, handler, kind, arg};
  if (calendar_) calendar_->push(e);
  else queue_->push(e);
}

void Simulation::time_limit_reached() {
  std::ostringstream os;
  os << "simulated time limit reached: " << double(limits_.max_tick) / double(kTicksPerUs) / 1e6
     << " s of simulated time (the limit) with " << queue_->size()
     << " events pending; raise it with --max-sim-seconds";
  if (stall_reporter_) os << "\n" << stall_reporter_();
  throw LimitError(os.str());
}

void Simulation::no_progress() {
  std::ostringstream os;
  os << "watchdog: no progress in the last " << limits_.max_events_without_progress << " events at "
     << double(now_) / kTicksPerUs << " us";
  if (stall_reporter_) os << "\n" << stall_reporter_();
  throw SimulationError(os.str());
}

void Simulation::event_limit_reached() {
  std::ostringstream os;
  os << "event limit reached: " << events_ << " events (the limit is " << limits_.max_events << ") at "
     << double(now_) / kTicksPerUs << " us of simulated time; raise it with --max-events";
  throw LimitError(os.str());
}

void Simulation::host_limit_reached(double seconds) {
  std::ostringstream os;
  os << "host time limit reached: " << seconds_text(seconds) << " s of host time (the limit is "
     << seconds_text(limits_.max_host_seconds) << " s) after " << events_ << " events, at "
     << double(now_) / kTicksPerUs << " us of simulated time; raise it with --max-host-seconds";
  throw LimitError(os.str());
}

template <class Q>
Tick Simulation::run_on(Q& q, Tick until) {
  uint64_t last_progress = progress_;
  uint64_t events_since_progress = 0;
  while (!q.empty()) {
    const Event& top = q.top();
    if (top.tick > until) break;
    if (top.tick > limits_.max_tick) [[unlikely]] time_limit_reached();
    Event e = q.pop();
    now_ = e.tick;
    ++events_;
    e.handler->handle_event(now_, e.kind, e.arg);
    if (progress_ != last_progress) {
      last_progress = progress_;
      events_since_progress = 0;
    } else if (++events_since_progress > limits_.max_events_without_progress) [[unlikely]] {
      no_progress();
    }
    if (events_ > limits_.max_events) [[unlikely]] event_limit_reached();
    if ((events_ & (kHostCheckEvents - 1)) == 0 && limits_.max_host_seconds > 0) [[unlikely]] {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - limits_.host_start).count();
      if (s > limits_.max_host_seconds) host_limit_reached(s);
    }
  }
  return now_;
}

Tick Simulation::run(Tick until) {
  if (calendar_) return run_on(*calendar_, until);
  return run_on(*queue_, until);
}

std::shared_ptr<spdlog::logger> component_logger(const std::string& name) {
  static std::mutex m;  // spdlog's registry is thread-safe, but get-then-create must be atomic
  std::lock_guard<std::mutex> lock(m);
  if (auto l = spdlog::get(name)) return l;
  auto l = spdlog::stderr_color_mt(name);
  l->set_level(spdlog::get_level());
  return l;
}

Component::Component(Simulation& sim, StatGroup& parent_stats, const std::string& name, const std::string& logger_name)
    : sim_(sim), stats_(parent_stats.child(name)), log_(component_logger(logger_name)) {}

}  // namespace gtsim
