#include "sim/event_queue.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace gtsim {
namespace {
// std heap is a max-heap: "less" means "runs later".
struct RunsLater {
  bool operator()(const Event& a, const Event& b) const { return runs_later(a, b); }
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

CalendarEventQueue::CalendarEventQueue(unsigned bucket_shift, unsigned ring_bits)
    : shift_(bucket_shift), ring_(uint64_t(1) << std::max(ring_bits, 6u)), mask_(ring_ - 1) {
  buckets_.resize(ring_);
  bits_.assign(ring_ / 64, 0);
}

void CalendarEventQueue::push(const Event& e) {
  uint64_t b = e.tick >> shift_;
  if (size_ == 0) cur_ = b;  // empty: this event's bucket becomes the current one
  ++size_;
  if (b <= cur_) {
    near_.push_back(e);
    std::push_heap(near_.begin(), near_.end(), RunsLater{});
  } else if (b - cur_ < ring_) {
    std::vector<Event>& bk = buckets_[b & mask_];
    if (bk.empty()) mark(b);
    bk.push_back(e);
    ++in_ring_;
  } else {
    far_.push_back(e);
    std::push_heap(far_.begin(), far_.end(), RunsLater{});
  }
}

Event CalendarEventQueue::pop() {
  std::pop_heap(near_.begin(), near_.end(), RunsLater{});
  Event e = near_.back();
  near_.pop_back();
  --size_;
  if (near_.empty() && size_ != 0) advance();
  return e;
}

void CalendarEventQueue::advance() {
  uint64_t next = std::numeric_limits<uint64_t>::max();
  if (in_ring_ != 0) {
    // The first non-empty bucket after cur_ (all ring buckets lie in (cur_, cur_ + ring_)).
    uint64_t b = cur_ + 1;
    const size_t words = bits_.size();
    size_t w = size_t((b & mask_) >> 6);
    uint64_t word = bits_[w] & (~0ull << (b & 63));
    uint64_t base = b - (b & 63);  // bucket number of bit 0 of word w
    while (word == 0) {
      base += 64;
      w = w + 1 == words ? 0 : w + 1;
      word = bits_[w];
    }
    next = base + uint64_t(std::countr_zero(word));
  }
  if (!far_.empty()) next = std::min(next, far_.front().tick >> shift_);
  cur_ = next;
  // Overflow events that the ring now covers move into it (or straight into near_).
  while (!far_.empty() && (far_.front().tick >> shift_) - cur_ < ring_) {
    std::pop_heap(far_.begin(), far_.end(), RunsLater{});
    const Event& e = far_.back();
    uint64_t b = e.tick >> shift_;
    if (b == cur_) {
      near_.push_back(e);
    } else {
      std::vector<Event>& bk = buckets_[b & mask_];
      if (bk.empty()) mark(b);
      bk.push_back(e);
      ++in_ring_;
    }
    far_.pop_back();
  }
  std::vector<Event>& bk = buckets_[cur_ & mask_];
  if (!bk.empty()) {
    in_ring_ -= bk.size();
    bits_[(cur_ & mask_) >> 6] &= ~(1ull << (cur_ & 63));
    near_.insert(near_.end(), bk.begin(), bk.end());
    bk.clear();
  }
  std::make_heap(near_.begin(), near_.end(), RunsLater{});
}

}  // namespace gtsim
