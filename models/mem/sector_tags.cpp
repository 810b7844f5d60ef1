#include "models/mem/sector_tags.hpp"

#include <algorithm>

namespace gtsim::mem {

void SectorTags::configure(uint64_t sets, uint32_t assoc, bool pinned_fills) {
  pinned_fills_ = pinned_fills;
  sets_ = sets;
  assoc_ = assoc ? assoc : 1;
  ways_.assign(sets_ * assoc_, TagLine{});
  tags_.assign(sets_ * assoc_, TagLine::kInvalid);
  lru_.assign(sets_ * assoc_, 0);
  clock_ = 0;
}

TagLine* SectorTags::victim(uint64_t set) {
  size_t base = set * assoc_;
  const uint64_t* t = &tags_[base];
  const uint64_t* lru = &lru_[base];
  uint32_t best = assoc_;
  for (uint32_t i = 0; i < assoc_; ++i) {
    if (t[i] == TagLine::kInvalid) return &ways_[base + i];
    if (pinned_fills_ && ways_[base + i].mshr) continue;
    if (best == assoc_ || lru[i] < lru[best]) best = i;
  }
  return best == assoc_ ? nullptr : &ways_[base + best];
}

void SectorTags::invalidate_all() {
  for (auto& l : ways_) l = TagLine{};
  std::fill(tags_.begin(), tags_.end(), TagLine::kInvalid);
  std::fill(lru_.begin(), lru_.end(), 0);
  clock_ = 0;
}

}  // namespace gtsim::mem
