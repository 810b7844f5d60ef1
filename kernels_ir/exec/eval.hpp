// Internal: per-warp expression evaluation. A value is warp-uniform (U), affine in the lane
// (a + lane * s: the fast path for addresses) or a vector of 32 lane values (V).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels_ir/exec/program_impl.hpp"

namespace gtsim::ir {

enum VKind : uint8_t { kU, kA, kV };

struct Val {
  int64_t a = 0, s = 0;
  const int64_t* v = nullptr;
  uint8_t k = kU;
};

// A slot's value. The header is small and the slots of a warp are contiguous, so that reading a
// uniform value (a loop variable, a let) touches one host cache line; the 32 lane values live in
// the evaluator's row pool (`v`, one row per slot, read only while k == kV and written in full
// when a slot becomes kV, so rows of slots that stay uniform or affine are never touched).
struct Slot {
  int64_t a = 0, s = 0;
  int64_t* v = nullptr;
  uint8_t k = kU;
};

// Writes the 32 lane values of x to row (or returns x.v when x is already a vector).
inline const int64_t* lane_values(const Val& x, int64_t* row) {
  if (x.k == kV) return x.v;
  for (int l = 0; l < kWarpSize; ++l) row[l] = int64_t(uint64_t(x.a) + uint64_t(l) * uint64_t(x.s));
  return row;
}

class Evaluator {
 public:
  void init(const Program::Impl* p, const uint32_t cta[3], uint32_t warp, const int64_t tid[3][kWarpSize]);
  // Result valid until the next eval().
  Val eval(uint32_t id);
  int64_t eval_u(uint32_t id) {
    const CExpr& c = p_->exprs[id];
    if (c.u == Uniformity::kConst) return c.value;
    if (c.u == Uniformity::kUniform) return eval_scalar(c);
    Val r = eval(id);
    return r.k == kV ? r.v[0] : r.a;
  }
  // Lanes of `mask` where the expression is nonzero.
  uint32_t mask_of(uint32_t id, uint32_t mask);
  std::vector<Slot> slots;

 private:
  std::unique_ptr<int64_t[]> rows_;  // slots.size() rows of kWarpSize lane values (uninitialized)
  size_t rows_n_ = 0;
  const Program::Impl* p_ = nullptr;
  uint32_t cta_[3] = {0, 0, 0}, warp_ = 0;
  Val tid_[3];
  int64_t tidv_[3][kWarpSize] = {};
  std::vector<Val> st_;
  std::vector<int64_t> scratch_;
  void binary(ExprOp op, Val& x, Val& y, int64_t* rx, int64_t* ry);
  void unary(ExprOp op, Val& x, int64_t* rx);
  Val from_slot(uint32_t slot, int line, int col) const {
    if (slot >= slots.size()) [[unlikely]]
      slot_out_of_range(line, col);
    const Slot& s = slots[slot];
    return Val{s.a, s.s, s.v, s.k};
  }
  [[noreturn]] void slot_out_of_range(int line, int col) const;
  // A warp-uniform expression on a scalar stack (no lane vectors).
  int64_t eval_scalar(const CExpr& c);
  std::vector<int64_t> sst_;
};

}  // namespace gtsim::ir
