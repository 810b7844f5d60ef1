// The event queue: events ordered by (tick, priority, insertion sequence), so that runs are
// deterministic. Time never goes backwards: scheduling before now() is a programming error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace gtsim {

// Something that reacts to an event. `kind` and `arg` are the handler's own (an enum value and
// a token such as a request slot): events carry no heap-allocated closures.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle_event(Tick now, uint32_t kind, uint64_t arg) = 0;
};

struct Event {
  Tick tick = 0;
  int32_t priority = 0;   // lower runs first at equal tick
  uint64_t seq = 0;       // insertion order, the final tie-break
  EventHandler* handler = nullptr;
  uint32_t kind = 0;
  uint64_t arg = 0;
};

// The queue's data structure sits behind this interface so it can change (heap, calendar queue).
class EventQueue {
 public:
  virtual ~EventQueue() = default;
  virtual void push(const Event& e) = 0;
  virtual bool empty() const = 0;
  virtual const Event& top() const = 0;
  virtual Event pop() = 0;
  virtual size_t size() const = 0;
};

// Binary heap on a vector: no allocation per event once warmed up.
class HeapEventQueue final : public EventQueue {
 public:
  void push(const Event& e) override;
  bool empty() const override { return heap_.empty(); }
  const Event& top() const override { return heap_.front(); }
  Event pop() override;
  size_t size() const override { return heap_.size(); }

 private:
  std::vector<Event> heap_;
};

}  // namespace gtsim
