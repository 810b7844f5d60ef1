// The SM's shared pipe (the L1 data pipe) as an arbiter over the shared-memory requests
// (sm.shared.arbitration: round_robin): every cycle the pipe serves one wavefront of the next waiting
// request, round-robin over the requests in arrival order, and one warp's wavefronts enter at most
// one per `warp_cycles_per_wavefront` cycles. So requests that arrive together share the pipe and
// finish together, as the H200 serves a burst of loads after a barrier: every warp's last load
// completes near the end of the burst, and one warp alone takes two cycles a wavefront
// (validation/data/h200/experiments/b29_lds_burst, b31). Time is in SM cycles; the
// pipe is advanced lazily: `advance(until)` serves the cycles before `until`, and
// `next_event()` says when the next request finishes (or, for a full MIO queue, starts) if nothing
// else arrives, so that the SM can schedule an event there. docs/gpu_sm.md.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gtsim::gpu {

class SharedPipe {
 public:
  struct Request {
    uint16_t warp = 0;    // warp slot
    uint8_t sp = 0;       // its sub-partition (MIO queue)
    uint8_t n_dst = 0;    // registers the result writes (0: a store)
    uint16_t dst[2] = {0, 0};
    uint32_t wavefronts = 1;
  };
  static constexpr uint64_t kNone = ~0ull;

  void reset(std::size_t warp_slots, std::size_t sub_partitions, uint32_t warp_cycles_per_wavefront);
  // Queues r behind the waiting requests; the pipe must have been advanced to `cycle`.
  void enqueue(const Request& r, uint64_t cycle);
  // Serves the cycles in [served, until); calls done(request, cycle of its last wavefront) for each
  // request whose last wavefront was served.
  template <class Done>
  void advance(uint64_t until, Done&& done);
  // The first cycle in which a request's last wavefront would be served (with `starts`, also the first
  // cycle a request would start) if nothing else arrived; kNone when nothing waits.
  uint64_t next_event(bool starts) const;
  // Requests of sub-partition sp whose first wavefront has not been served (its MIO queue).
  uint32_t waiting(uint8_t sp) const { return waiting_[sp]; }
  bool busy() const { return !reqs_.empty(); }
  uint64_t served_through() const { return served_; }

 private:
  struct Waiting {
    Request r;
    uint32_t left;  // wavefronts not yet served
    bool started;
  };
  // The request served in cycle `cyc`, or reqs.size() when every waiting request's warp is within its gap.
  template <class Reqs, class Last>
  std::size_t pick(const Reqs& reqs, const Last& last, std::size_t rr, uint64_t cyc) const;

  std::vector<Waiting> reqs_;                // in arrival order
  std::vector<uint64_t> last_;               // per warp slot: cycle its last wavefront was served + 1 (0: never)
  std::vector<uint32_t> waiting_;            // per sub-partition
  std::size_t rr_ = 0;                       // index in reqs_ of the request considered first
  uint64_t served_ = 0;                      // cycles before this are served
  uint32_t gap_ = 1;
};

// The earliest cycle >= cyc at which warp slot `w` may have a wavefront served (last: its last
// served cycle + 1, 0 for never).
inline uint64_t pipe_eligible(uint64_t last, uint32_t gap, uint64_t cyc) {
  return last == 0 ? cyc : std::max(cyc, last - 1 + gap);
}

template <class Reqs, class Last>
std::size_t SharedPipe::pick(const Reqs& reqs, const Last& last, std::size_t rr, uint64_t cyc) const {
  const std::size_t n = reqs.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (rr + k) % n;
    if (pipe_eligible(last[reqs[i].r.warp], gap_, cyc) == cyc) return i;
  }
  return n;
}

template <class Done>
void SharedPipe::advance(uint64_t until, Done&& done) {
  uint64_t cyc = served_;
  while (cyc < until && !reqs_.empty()) {
    const std::size_t i = pick(reqs_, last_, rr_, cyc);
    if (i == reqs_.size()) {  // every waiting warp is within its gap: skip to the first that is not
      uint64_t e = ~0ull;
      for (const Waiting& q : reqs_) e = std::min(e, pipe_eligible(last_[q.r.warp], gap_, cyc));
      cyc = e;
      continue;
    }
    Waiting& q = reqs_[i];
    if (!q.started) {
      q.started = true;
      --waiting_[q.r.sp];
    }
    last_[q.r.warp] = cyc + 1;
    rr_ = i + 1;
    if (--q.left == 0) {
      const Request r = q.r;
      reqs_.erase(reqs_.begin() + std::ptrdiff_t(i));
      rr_ = i;
      done(r, cyc);
    }
    if (rr_ >= reqs_.size()) rr_ = 0;
    ++cyc;
  }
  served_ = std::max(served_, until);
}

}  // namespace gtsim::gpu
