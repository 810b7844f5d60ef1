#include "models/mem/sector_tags.hpp"

namespace gtsim::mem {

void SectorTags::configure(uint64_t sets, uint32_t assoc) {
  sets_ = sets;
  assoc_ = assoc ? assoc : 1;
  ways_.assign(sets_ * assoc_, TagLine{});
  clock_ = 0;
}

TagLine* SectorTags::victim(uint64_t set) {
  TagLine* w = &ways_[set * assoc_];
  TagLine* best = nullptr;
  for (uint32_t i = 0; i < assoc_; ++i) {
    if (!w[i].present()) return &w[i];
    if (w[i].mshr) continue;
    if (!best || w[i].lru < best->lru) best = &w[i];
  }
  return best;
}

void SectorTags::invalidate_all() {
  for (auto& l : ways_) l = TagLine{};
  clock_ = 0;
}

}  // namespace gtsim::mem
