#include "models/mem/coalescer.hpp"

#include <bit>

namespace gtsim::mem {

Coalescer::Coalescer(uint32_t line_bytes, uint32_t sector_bytes)
    : line_shift_(uint32_t(std::countr_zero(line_bytes))),
      sector_shift_(uint32_t(std::countr_zero(sector_bytes))),
      line_mask_(line_bytes - 1) {
  out_.reserve(2 * ir::kWarpSize);
}

void Coalescer::add(uint64_t byte_addr, uint32_t bytes) {
  uint64_t line = byte_addr >> line_shift_;
  uint64_t off = byte_addr & line_mask_;
  uint32_t first = uint32_t(off >> sector_shift_);
  uint32_t last = uint32_t((off + bytes - 1) >> sector_shift_);
  uint32_t mask = ((last >= 31 ? 0xffffffffu : ((1u << (last + 1)) - 1)) >> first) << first;
  // Consecutive lanes usually hit the line of the previous lane: check it first.
  for (size_t i = out_.size(); i-- > 0;) {
    if (out_[i].line == line) {
      out_[i].sector_mask |= mask;
      out_[i].bytes += bytes;
      return;
    }
  }
  out_.push_back({line, mask, bytes});
}

const std::vector<LineRequest>& Coalescer::coalesce(const ir::DynInst& inst) {
  out_.clear();
  sectors_ = 0;
  uint32_t bytes = inst.access_bytes ? inst.access_bytes : 4;
  uint64_t line_bytes = line_mask_ + 1;
  for (uint32_t active = inst.addr_active; active; active &= active - 1) {  // lanes that access global memory
    int lane = std::countr_zero(active);
    uint64_t a = inst.addr[lane];
    uint64_t room = line_bytes - (a & line_mask_);
    if (bytes <= room) {
      add(a, bytes);
    } else {  // straddles a line boundary: both lines
      add(a, uint32_t(room));
      add(a + room, uint32_t(bytes - room));
    }
  }
  for (const auto& r : out_) sectors_ += uint32_t(std::popcount(r.sector_mask));
  return out_;
}

}  // namespace gtsim::mem
