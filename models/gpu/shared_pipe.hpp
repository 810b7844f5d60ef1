// The SM's shared pipe (the L1 data pipe) as an arbiter over the shared-memory requests: every
// cycle it serves one wavefront, and one warp's wavefronts enter at most one per
// `warp_cycles_per_wavefront` cycles. Whose wavefront (sm.shared.arbitration):
//   round_robin: round-robin over every waiting request in arrival order, so requests that arrive
//     together finish together;
//   sub_partition: round-robin over the sub-partitions' MIO queues, each queue's oldest request
//     first, so the sub-partitions' warps are interleaved and one sub-partition's warps are not.
// Evidence: validation/data/h200/experiments/b29_lds_burst (b29-b31), b33_lds_steady. Time is in SM cycles; the
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
    uint16_t warp = 0;  // warp slot
    uint8_t sp = 0;     // its sub-partition (MIO queue)
    uint8_t n_dst = 0;  // registers the result writes (0: a store)
    uint16_t dst[2] = {0, 0};
    uint32_t wavefronts = 1;
  };
  enum class Order : uint8_t { kRequests, kSubPartitions };
  static constexpr uint64_t kNone = ~0ull;

  void reset(std::size_t warp_slots, std::size_t sub_partitions, uint32_t warp_cycles_per_wavefront,
             Order order = Order::kRequests);
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
  uint32_t waiting(uint8_t sp) const { return state_.waiting[sp]; }
  // Nothing waits or is being served (sm.shared.mio_queue_depth 0 issues only then).
  bool idle() const { return state_.reqs.empty(); }

 private:
  struct Waiting {
    Request r;
    uint32_t left;  // wavefronts not yet served
    bool started;
  };
  // What serving changes; next_event() serves a copy.
  struct State {
    std::vector<Waiting> reqs;      // in arrival order
    std::vector<uint64_t> last;     // per warp slot: cycle its last wavefront was served + 1 (0: never)
    std::vector<uint32_t> waiting;  // per sub-partition: requests not yet started
    std::size_t rr = 0;             // request (kRequests) or sub-partition (kSubPartitions) considered first
    uint64_t cyc = 0;               // cycles before this are served
  };
  // The first cycle >= st.cyc at which q's warp is out of its gap.
  uint64_t eligible(const State& st, const Waiting& q) const;
  // The request whose wavefront the pipe serves next and the cycle (>= st.cyc) it serves it, with
  // nothing else arriving; reqs.size() when nothing waits.
  std::size_t pick_next(const State& st, uint64_t& at) const;
  // Serves request i's next wavefront at cycle `at`; true when that was its last.
  bool serve(State& st, std::size_t i, uint64_t at) const;
  uint64_t first_event(bool starts) const;  // next_event, computed

  State state_;
  // scratch for next_event's copy and pick_next's queue heads: reused, so that no event allocates
  mutable State scratch_;
  mutable std::vector<std::size_t> head_ = std::vector<std::size_t>(1);
  // next_event's answers (finish only; start or finish), valid until a request arrives or the pipe
  // is advanced past them: advancing to a cycle before the next event follows the same path.
  static constexpr uint64_t kUnknown = kNone - 1;
  mutable uint64_t next_[2] = {kUnknown, kUnknown};
  uint32_t gap_ = 1;
  std::size_t sps_ = 1;
  Order order_ = Order::kRequests;
};

inline uint64_t SharedPipe::eligible(const State& st, const Waiting& q) const {
  const uint64_t last = st.last[q.r.warp];
  return last == 0 ? st.cyc : std::max(st.cyc, last - 1 + gap_);
}

template <class Done>
void SharedPipe::advance(uint64_t until, Done&& done) {
  State& st = state_;
  uint64_t at = 0;
  for (std::size_t i; st.cyc < until && (i = pick_next(st, at)) < st.reqs.size() && at < until;) {
    const Request r = st.reqs[i].r;
    if (serve(st, i, at)) done(r, at);
  }
  st.cyc = std::max(st.cyc, until);
  for (uint64_t& e : next_)
    if (e != kNone && e < until) e = kUnknown;
}

}  // namespace gtsim::gpu
