#include "sim/simulation.hpp"

#include <mutex>
#include <sstream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "sim/error.hpp"

namespace gtsim {

Simulation::Simulation(std::unique_ptr<EventQueue> queue) : queue_(std::move(queue)) {
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
  os << "watchdog: simulated time limit of " << limits_.max_tick / kTicksPerUs << " us reached with "
     << queue_->size() << " events pending";
  if (stall_reporter_) os << "\n" << stall_reporter_();
  throw SimulationError(os.str());
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
  os << "watchdog: event limit of " << limits_.max_events << " reached at " << double(now_) / kTicksPerUs
     << " us";
  throw SimulationError(os.str());
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
