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

// True when a runs after b in (tick, priority, seq) order.
inline bool runs_later(const Event& a, const Event& b) {
  if (a.tick != b.tick) return a.tick > b.tick;
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.seq > b.seq;
}

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

// Calendar (bucket) queue with exactly the heap's order. Time is cut into buckets of
// 2^bucket_shift ticks; a ring of 2^ring_bits buckets covers the near future. Only the current
// bucket is ordered (a small heap, `near_`); later buckets in the ring are unsorted vectors, and
// events beyond the ring wait in an overflow heap. Invariant: near_ holds every event whose bucket
// is <= cur_, everything else is in a later bucket, so near_'s top is the global minimum. Pushes
// and pops touch a small, cache-resident heap instead of one over every pending event.
class CalendarEventQueue final : public EventQueue {
 public:
  explicit CalendarEventQueue(unsigned bucket_shift = 10, unsigned ring_bits = 14);
  void push(const Event& e) override;
  bool empty() const override { return size_ == 0; }
  const Event& top() const override { return near_.front(); }
  Event pop() override;
  size_t size() const override { return size_; }

 private:
  void advance();  // near_ is empty and size_ > 0: move the next bucket in
  void mark(uint64_t b) { bits_[(b & mask_) >> 6] |= 1ull << (b & 63); }

  unsigned shift_;
  uint64_t ring_, mask_;
  uint64_t cur_ = 0;                          // bucket number (tick >> shift_) that near_ holds
  size_t size_ = 0, in_ring_ = 0;
  std::vector<Event> near_;                   // heap (runs_later order)
  std::vector<std::vector<Event>> buckets_;   // bucket b in (cur_, cur_ + ring_) at b & mask_
  std::vector<uint64_t> bits_;                // non-empty buckets of the ring
  std::vector<Event> far_;                    // heap: buckets at or beyond the ring when pushed
};

}  // namespace gtsim
