#include "models/gpu/shared_pipe.hpp"

#include <algorithm>

namespace gtsim::gpu {

void SharedPipe::reset(std::size_t warp_slots, std::size_t sub_partitions, uint32_t warp_cycles_per_wavefront) {
  reqs_.clear();
  last_.assign(warp_slots, 0);
  waiting_.assign(sub_partitions, 0);
  rr_ = 0;
  served_ = 0;
  gap_ = std::max<uint32_t>(warp_cycles_per_wavefront, 1);
}

void SharedPipe::enqueue(const Request& r, uint64_t cycle) {
  served_ = std::max(served_, cycle);
  reqs_.push_back(Waiting{r, std::max<uint32_t>(r.wavefronts, 1), false});
  ++waiting_[r.sp];
}

uint64_t SharedPipe::next_event(bool starts) const {
  if (reqs_.empty()) return kNone;
  // Serve a copy until a request finishes (or starts); nothing leaves the copy before that.
  std::vector<Waiting> reqs = reqs_;
  std::vector<uint64_t> last = last_;
  std::size_t rr = rr_;
  for (uint64_t cyc = served_;;) {
    const std::size_t i = pick(reqs, last, rr, cyc);
    if (i == reqs.size()) {
      uint64_t e = kNone;
      for (const Waiting& q : reqs) e = std::min(e, pipe_eligible(last[q.r.warp], gap_, cyc));
      cyc = e;
      continue;
    }
    if ((starts && !reqs[i].started) || reqs[i].left == 1) return cyc;
    --reqs[i].left;
    reqs[i].started = true;
    last[reqs[i].r.warp] = cyc + 1;
    rr = (i + 1) % reqs.size();
    ++cyc;
  }
}

}  // namespace gtsim::gpu
