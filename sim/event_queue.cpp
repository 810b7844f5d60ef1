#include "sim/event_queue.hpp"

#include <algorithm>

namespace gtsim {
namespace {
// std heap is a max-heap: "less" means "runs later".
struct RunsLater {
  bool operator()(const Event& a, const Event& b) const {
    if (a.tick != b.tick) return a.tick > b.tick;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.seq > b.seq;
  }
};
}  // namespace

void HeapEventQueue::push(const Event& e) {
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), RunsLater{});
}

Event HeapEventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), RunsLater{});
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace gtsim
