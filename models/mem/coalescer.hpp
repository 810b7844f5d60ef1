// The coalescer: a warp's per-lane addresses become one request per touched 128-byte line,
// each with its 32-byte sector mask. An access that straddles a line boundary touches both
// lines. Requests come out in order of the first lane that touches each line. The output
// buffer is reused across calls: no allocation in the hot path.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::mem {

struct LineRequest {
  uint64_t line = 0;         // line address (byte address / line_bytes)
  uint32_t sector_mask = 0;  // bit i: sector i of the line
  uint32_t bytes = 0;        // bytes the active lanes touch in this line (useful bytes)
};

class Coalescer {
 public:
  explicit Coalescer(uint32_t line_bytes = 128, uint32_t sector_bytes = 32);
  // Coalesces the active lanes of `inst` (addr, access_bytes, active). Returns the requests,
  // valid until the next call.
  const std::vector<LineRequest>& coalesce(const ir::DynInst& inst);
  uint32_t sectors() const { return sectors_; }

 private:
  void add(uint64_t byte_addr, uint32_t bytes);
  uint32_t line_shift_, sector_shift_;
  uint64_t line_mask_;
  std::vector<LineRequest> out_;
  uint32_t sectors_ = 0;
};

}  // namespace gtsim::mem
