#include "models/gpu/shared_pipe.hpp"

#include <algorithm>

namespace gtsim::gpu {

void SharedPipe::reset(std::size_t warp_slots, std::size_t sub_partitions, uint32_t warp_cycles_per_wavefront,
                       Order order) {
  state_ = State{};
  state_.last.assign(warp_slots, 0);
  state_.waiting.assign(sub_partitions, 0);
  gap_ = std::max<uint32_t>(warp_cycles_per_wavefront, 1);
  sps_ = std::max<std::size_t>(sub_partitions, 1);
  order_ = order;
  head_.assign(sps_, 0);
  next_[0] = next_[1] = kUnknown;
}

void SharedPipe::enqueue(const Request& r, uint64_t cycle) {
  state_.cyc = std::max(state_.cyc, cycle);
  state_.reqs.push_back(Waiting{r, std::max<uint32_t>(r.wavefronts, 1), false});
  next_[0] = next_[1] = kUnknown;
  ++state_.waiting[r.sp];
}

std::size_t SharedPipe::pick_next(const State& st, uint64_t& at) const {
  const std::size_t n = st.reqs.size();
  if (n == 0) return n;
  if (order_ == Order::kRequests) {
    // the first request from st.rr on whose warp may go at the earliest such cycle
    uint64_t best = kNone;
    std::size_t pick = n;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (st.rr + k) % n;
      const uint64_t e = eligible(st, st.reqs[i]);
      if (e < best) best = e, pick = i;
      if (e == st.cyc) break;
    }
    at = best;
    return pick;
  }
  // kSubPartitions: each sub-partition's oldest request; the first sub-partition from st.rr on
  auto& head = head_;  // reused scratch: no allocation per wavefront
  std::fill(head.begin(), head.end(), n);
  for (std::size_t i = 0, found = 0; i < n && found < sps_; ++i)
    if (head[st.reqs[i].r.sp] == n) head[st.reqs[i].r.sp] = i, ++found;
  uint64_t best = kNone;
  std::size_t pick = n;
  for (std::size_t k = 0; k < sps_; ++k) {
    const std::size_t i = head[(st.rr + k) % sps_];
    if (i == n) continue;
    const uint64_t e = eligible(st, st.reqs[i]);
    if (e < best) best = e, pick = i;
    if (e == st.cyc) break;
  }
  at = best;
  return pick;
}

bool SharedPipe::serve(State& st, std::size_t i, uint64_t at) const {
  Waiting& q = st.reqs[i];
  if (!q.started) {
    q.started = true;
    --st.waiting[q.r.sp];
  }
  st.last[q.r.warp] = at + 1;
  st.cyc = at + 1;
  st.rr = order_ == Order::kRequests ? i + 1 : (q.r.sp + 1) % sps_;
  if (--q.left > 0) {
    if (st.rr >= st.reqs.size() && order_ == Order::kRequests) st.rr = 0;
    return false;
  }
  st.reqs.erase(st.reqs.begin() + std::ptrdiff_t(i));
  if (order_ == Order::kRequests) st.rr = st.reqs.empty() || i >= st.reqs.size() ? 0 : i;
  return true;
}

uint64_t SharedPipe::next_event(bool starts) const {
  uint64_t& memo = next_[starts ? 1 : 0];
  if (memo == kUnknown) memo = first_event(starts);
  return memo;
}

uint64_t SharedPipe::first_event(bool starts) const {
  State& st = scratch_;  // served on a copy until a request finishes (or starts)
  st = state_;           // (copy-assignment keeps the scratch vectors' storage: no allocation)
  uint64_t at = kNone;
  for (;;) {
    const std::size_t i = pick_next(st, at);
    if (i == st.reqs.size()) return kNone;
    if (starts && !st.reqs[i].started) return at;
    if (serve(st, i, at)) return at;
  }
}

}  // namespace gtsim::gpu
