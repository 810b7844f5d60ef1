// The SIMT reconvergence stack: one entry per pending path (active mask, next pc, reconvergence pc).
// Divergent `if`: the taken path runs first, then the else path, and both reconverge at the end of
// the if (its immediate post-dominator). Loops with lane-varying bounds: lanes that leave wait in
// the entry below until the last lane leaves.
#pragma once

#include <cstdint>
#include <vector>

namespace gtsim::ir {

struct SimtEntry {
  uint32_t mask = 0;  // lanes on this path
  uint32_t pc = 0;    // next code index of this path
  uint32_t rpc = 0;   // reconvergence point: the entry is popped when pc reaches it
};

class SimtStack {
 public:
  static constexpr uint32_t kNoRpc = 0xffffffffu;
  void reset(uint32_t mask, uint32_t pc, size_t capacity) {
    e_.clear();
    e_.reserve(capacity);
    e_.push_back({mask, pc, kNoRpc});
  }
  bool empty() const { return e_.empty(); }
  size_t depth() const { return e_.size(); }
  SimtEntry& top() { return e_.back(); }
  void pop() { e_.pop_back(); }

  // Divergent if at the current top: top becomes the reconvergence entry at end_pc.
  void diverge(uint32_t taken, uint32_t then_pc, uint32_t else_pc, uint32_t end_pc, bool has_else) {
    SimtEntry& t = e_.back();
    uint32_t all = t.mask;
    t.pc = end_pc;
    if (has_else) e_.push_back({all & ~taken, else_pc, end_pc});
    e_.push_back({taken, then_pc, end_pc});
  }

  // Loop with lane-varying bounds: the top waits at exit_pc for the lanes iterating from test_pc.
  void enter_loop(uint32_t test_pc, uint32_t exit_pc) {
    SimtEntry& t = e_.back();
    uint32_t m = t.mask;
    t.pc = exit_pc;
    e_.push_back({m, test_pc, exit_pc});
  }

  // Lanes of the top path exit the kernel: they leave every entry.
  void exit_lanes(uint32_t lanes) {
    for (auto& e : e_) e.mask &= ~lanes;
  }

 private:
  std::vector<SimtEntry> e_;
};

}  // namespace gtsim::ir
