// A sectored, set-associative tag array with LRU replacement, shared by the L1 and the L2
// slices. Lines carry per-sector valid and dirty bits, an LRU stamp (kept apart, with the tags), the tick at which
// their fill arrives (L2: later hits wait for it), and an MSHR id while a fill is in flight (L1). The caller chooses
// the set (L1: line modulo sets; L2: a hash), so the full line address is kept as the tag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace gtsim::mem {

struct TagLine {
  static constexpr uint64_t kInvalid = ~0ull;
  uint64_t line = kInvalid;
  Tick ready = 0;           // fill arrival tick (sectors are valid from then on)
  uint32_t valid = 0;       // sector mask
  uint32_t dirty = 0;       // sector mask (write-back caches)
  uint32_t mshr = 0;        // 0: none; else MSHR index + 1 (fill in flight)
  bool dirty_loop = false;  // dirtied by a sampling loop's work: its write-back is that work's (Counter::LoopWork)
  bool present() const { return line != kInvalid; }
};

class SectorTags {
 public:
  // sets = 0 means no capacity (every lookup misses, nothing can be allocated).
  // pinned_fills: ways with a fill in flight (mshr != 0) are never victims (the L1).
  void configure(uint64_t sets, uint32_t assoc, bool pinned_fills = false);
  uint64_t sets() const { return sets_; }
  uint32_t assoc() const { return assoc_; }
  // The way holding `line` in `set`, or nullptr. Scans a compact array of tags (an L2 slice's
  // ways would otherwise cost several cache misses per lookup).
  TagLine* find(uint64_t set, uint64_t line) {
    const uint64_t* t = &tags_[set * assoc_];
    for (uint32_t i = 0; i < assoc_; ++i)
      if (t[i] == line) return &ways_[set * assoc_ + i];
    return nullptr;
  }
  // Reinitializes way `l` to hold `line` with no valid sectors.
  void assign(TagLine* l, uint64_t line) {
    *l = TagLine{};
    l->line = line;
    tags_[size_t(l - ways_.data())] = line;
  }
  // The LRU way of `set` among those without a fill in flight (an invalid way first); nullptr
  // when every way is waiting for a fill. The caller writes back and assign()s it.
  TagLine* victim(uint64_t set);
  void touch(TagLine* l) { lru_[size_t(l - ways_.data())] = ++clock_; }
  void invalidate_all();
  std::vector<TagLine>& ways() { return ways_; }
  const std::vector<TagLine>& ways() const { return ways_; }

 private:
  uint64_t sets_ = 0;
  uint32_t assoc_ = 1;
  uint64_t clock_ = 0;
  bool pinned_fills_ = false;
  std::vector<TagLine> ways_;
  std::vector<uint64_t> tags_;  // ways_[i].line, contiguous
  std::vector<uint64_t> lru_;   // LRU stamps, contiguous
};

}  // namespace gtsim::mem
