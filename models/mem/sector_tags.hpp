// A sectored, set-associative tag array with LRU replacement, shared by the L1 and the L2
// slices. Lines carry per-sector valid and dirty bits, an LRU stamp, the tick at which their
// fill arrives (L2: later hits wait for it), and an MSHR id while a fill is in flight (L1).
// The caller chooses the set (L1: line modulo sets; L2: a hash), so the full line address is
// kept as the tag.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace gtsim::mem {

struct TagLine {
  static constexpr uint64_t kInvalid = ~0ull;
  uint64_t line = kInvalid;
  uint64_t lru = 0;
  Tick ready = 0;           // fill arrival tick (sectors are valid from then on)
  uint32_t valid = 0;       // sector mask
  uint32_t dirty = 0;       // sector mask (write-back caches)
  uint32_t mshr = 0;        // 0: none; else MSHR index + 1 (fill in flight)
  bool present() const { return line != kInvalid; }
};

class SectorTags {
 public:
  // sets = 0 means no capacity (every lookup misses, nothing can be allocated).
  void configure(uint64_t sets, uint32_t assoc);
  uint64_t sets() const { return sets_; }
  uint32_t assoc() const { return assoc_; }
  // The way holding `line` in `set`, or nullptr.
  TagLine* find(uint64_t set, uint64_t line) {
    TagLine* w = &ways_[set * assoc_];
    for (uint32_t i = 0; i < assoc_; ++i)
      if (w[i].line == line) return &w[i];
    return nullptr;
  }
  // The LRU way of `set` among those without a fill in flight (an invalid way first); nullptr
  // when every way is waiting for a fill. The caller writes back and reinitializes it.
  TagLine* victim(uint64_t set);
  void touch(TagLine* l) { l->lru = ++clock_; }
  void invalidate_all();
  std::vector<TagLine>& ways() { return ways_; }

 private:
  uint64_t sets_ = 0;
  uint32_t assoc_ = 1;
  uint64_t clock_ = 0;
  std::vector<TagLine> ways_;
};

}  // namespace gtsim::mem
