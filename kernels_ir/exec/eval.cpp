#include "kernels_ir/exec/eval.hpp"

#include <bit>
#include <string>

#include "sim/error.hpp"

namespace gtsim::ir {
namespace {

template <class F>
inline void lanes2(int64_t* out, const int64_t* x, const int64_t* y, F f) {
  for (int l = 0; l < kWarpSize; ++l) out[l] = f(x[l], y[l]);
}

void vec_op(ExprOp op, int64_t* out, const int64_t* x, const int64_t* y) {
  using U = uint64_t;
  switch (op) {
    case ExprOp::kAdd:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return int64_t(U(a) + U(b)); });
      return;
    case ExprOp::kSub:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return int64_t(U(a) - U(b)); });
      return;
    case ExprOp::kMul:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return int64_t(U(a) * U(b)); });
      return;
    case ExprOp::kAnd:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return a & b; });
      return;
    case ExprOp::kOr:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return a | b; });
      return;
    case ExprOp::kXor:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return a ^ b; });
      return;
    case ExprOp::kShl:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return int64_t(U(a) << (U(b) & 63)); });
      return;
    case ExprOp::kShr:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return a >> (U(b) & 63); });
      return;
    case ExprOp::kLt:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return int64_t(a < b); });
      return;
    case ExprOp::kEq:
      lanes2(out, x, y, [](int64_t a, int64_t b) { return int64_t(a == b); });
      return;
    default:
      lanes2(out, x, y, [op](int64_t a, int64_t b) { return scalar_op(op, a, b); });
      return;
  }
}

}  // namespace

void Evaluator::init(const Program::Impl* p, const uint32_t cta[3], uint32_t warp, const int64_t tid[3][kWarpSize]) {
  p_ = p;
  for (int d = 0; d < 3; ++d) {
    cta_[d] = cta[d];
    bool affine = true;
    for (int l = 0; l < kWarpSize; ++l) {
      tidv_[d][l] = tid[d][l];
      affine &= l < 2 || tid[d][l] - tid[d][l - 1] == tid[d][1] - tid[d][0];
    }
    int64_t s = tid[d][1] - tid[d][0];
    tid_[d] = affine ? Val{tid[d][0], s, nullptr, uint8_t(s == 0 ? kU : kA)} : Val{0, 0, tidv_[d], kV};
  }
  warp_ = warp;
  st_.assign(p->max_depth + 1, Val{});
  scratch_.assign(size_t(p->max_depth + 1) * kWarpSize, 0);
  sst_.assign(p->max_depth + 1, 0);
  slots.assign(p->slots.size(), Slot{});
  if (rows_n_ != slots.size()) {
    rows_.reset(new int64_t[slots.size() * kWarpSize]);  // default-initialized: pages untouched until used
    rows_n_ = slots.size();
  }
  for (size_t i = 0; i < slots.size(); ++i) slots[i].v = rows_.get() + i * kWarpSize;
}

void Evaluator::slot_out_of_range(int line, int col) const {
  throw InputError(SourcePos{p_->file, line, col},
                   "register array index out of range at run time, expected an index below the array size");
}

void Evaluator::unary(ExprOp op, Val& x, int64_t* rx) {
  if (x.k == kU) {
    x.a = scalar_op(op, x.a, 0);
    return;
  }
  if (op == ExprOp::kNeg && x.k == kA) {
    x.a = scalar_op(op, x.a, 0), x.s = scalar_op(op, x.s, 0);
    return;
  }
  const int64_t* xp = lane_values(x, rx);
  for (int l = 0; l < kWarpSize; ++l) rx[l] = scalar_op(op, xp[l], 0);
  x.k = kV, x.v = rx;
}

void Evaluator::binary(ExprOp op, Val& x, Val& y, int64_t* rx, int64_t* ry) {
  using U = uint64_t;
  if (x.k == kU && y.k == kU) {
    x.a = scalar_op(op, x.a, y.a);
    return;
  }
  if (x.k != kV && y.k != kV) {
    switch (op) {
      case ExprOp::kAdd:
        x = Val{int64_t(U(x.a) + U(y.a)), int64_t(U(x.s) + U(y.s)), nullptr, kA};
        return;
      case ExprOp::kSub:
        x = Val{int64_t(U(x.a) - U(y.a)), int64_t(U(x.s) - U(y.s)), nullptr, kA};
        return;
      case ExprOp::kMul:
        if (y.k == kU) {
          x = Val{int64_t(U(x.a) * U(y.a)), int64_t(U(x.s) * U(y.a)), nullptr, kA};
          return;
        }
        if (x.k == kU) {
          x = Val{int64_t(U(x.a) * U(y.a)), int64_t(U(x.a) * U(y.s)), nullptr, kA};
          return;
        }
        break;
      case ExprOp::kShl:
        if (y.k == kU) {
          x = Val{int64_t(U(x.a) << (U(y.a) & 63)), int64_t(U(x.s) << (U(y.a) & 63)), nullptr, kA};
          return;
        }
        break;
      default:
        break;
    }
  }
  const int64_t* xp = lane_values(x, rx);
  if (y.k == kU && y.a > 0 && (y.a & (y.a - 1)) == 0 &&
      (op == ExprOp::kDiv || op == ExprOp::kMod || op == ExprOp::kCdiv)) {
    // Index math divides by tile sizes (BK, BN, 256, ...): with no negative lane, a power-of-two
    // divisor is a shift and a mask, the same values as scalar_op's 64-bit division.
    int64_t sign = 0;
    for (int l = 0; l < kWarpSize; ++l) sign |= xp[l];
    if (sign >= 0) {
      const int sh = std::countr_zero(uint64_t(y.a));
      const int64_t mask = y.a - 1;
      if (op == ExprOp::kDiv)
        lanes2(rx, xp, xp, [sh](int64_t a, int64_t) { return a >> sh; });
      else if (op == ExprOp::kMod)
        lanes2(rx, xp, xp, [mask](int64_t a, int64_t) { return a & mask; });
      else
        lanes2(rx, xp, xp, [sh, mask](int64_t a, int64_t) { return (a >> sh) + ((a & mask) != 0); });
      x.k = kV, x.v = rx;
      return;
    }
  }
  const int64_t* yp = lane_values(y, ry);
  vec_op(op, rx, xp, yp);
  x.k = kV, x.v = rx;
}

Val Evaluator::eval(uint32_t id) {
  const CExpr& c = p_->exprs[id];
  if (c.u == Uniformity::kConst) return Val{c.value};
  size_t sp = 0;
  const Node* n = p_->nodes.data() + c.first;
  for (uint32_t i = 0; i < c.count; ++i, ++n) {
    switch (n->kind) {
      case NodeKind::kConst:
        st_[sp++] = Val{n->c};
        break;
      case NodeKind::kSlot:
        st_[sp++] = from_slot(n->slot, n->line, n->col);
        break;
      case NodeKind::kSlotIdx: {
        Val& ix = st_[sp - 1];
        int64_t k = ix.k == kV ? ix.v[0] : ix.a;
        if (k < 0 || k >= int64_t(n->count))
          throw InputError(SourcePos{p_->file, n->line, n->col}, "register index " + std::to_string(k) +
                                                                     " out of range at run time, expected 0 .. " +
                                                                     std::to_string(n->count - 1));
        ix = from_slot(n->slot + uint32_t(k), n->line, n->col);
        break;
      }
      case NodeKind::kLane:
        st_[sp++] = Val{0, 1, nullptr, kA};
        break;
      case NodeKind::kTid:
        st_[sp++] = tid_[n->slot];
        break;
      case NodeKind::kWarp:
        st_[sp++] = Val{int64_t(warp_)};
        break;
      case NodeKind::kCtaid:
        st_[sp++] = Val{int64_t(cta_[n->slot])};
        break;
      case NodeKind::kUnary:
        unary(n->op, st_[sp - 1], &scratch_[(sp - 1) * kWarpSize]);
        break;
      case NodeKind::kBinary:
        binary(n->op, st_[sp - 2], st_[sp - 1], &scratch_[(sp - 2) * kWarpSize], &scratch_[(sp - 1) * kWarpSize]);
        --sp;
        break;
      case NodeKind::kSelect: {
        Val &cv = st_[sp - 3], &a = st_[sp - 2], &b = st_[sp - 1];
        int64_t* r0 = &scratch_[(sp - 3) * kWarpSize];
        if (cv.k == kU) {
          Val pick = cv.a ? a : b;
          // the picked value may live in a scratch row above; copy it down when it is a vector
          if (pick.k == kV) {
            for (int l = 0; l < kWarpSize; ++l) r0[l] = pick.v[l];
            pick.v = r0;
          }
          cv = pick;
        } else {
          const int64_t* cp = lane_values(cv, r0);
          const int64_t* ap = lane_values(a, &scratch_[(sp - 2) * kWarpSize]);
          const int64_t* bp = lane_values(b, &scratch_[(sp - 1) * kWarpSize]);
          for (int l = 0; l < kWarpSize; ++l) r0[l] = cp[l] ? ap[l] : bp[l];
          cv.k = kV, cv.v = r0;
        }
        sp -= 2;
        break;
      }
    }
  }
  return st_[0];
}

int64_t Evaluator::eval_scalar(const CExpr& c) {
  size_t sp = 0;
  int64_t* st = sst_.data();
  const Node* n = p_->nodes.data() + c.first;
  for (uint32_t i = 0; i < c.count; ++i, ++n) {
    switch (n->kind) {
      case NodeKind::kConst:
        st[sp++] = n->c;
        break;
      case NodeKind::kSlot: {
        const Slot& s = slots[n->slot];
        st[sp++] = s.k == kV ? s.v[0] : s.a;
        break;
      }
      case NodeKind::kSlotIdx: {
        int64_t k = st[sp - 1];
        if (k < 0 || k >= int64_t(n->count))
          throw InputError(SourcePos{p_->file, n->line, n->col}, "register index " + std::to_string(k) +
                                                                     " out of range at run time, expected 0 .. " +
                                                                     std::to_string(n->count - 1));
        const Slot& s = slots[n->slot + uint32_t(k)];
        st[sp - 1] = s.k == kV ? s.v[0] : s.a;
        break;
      }
      case NodeKind::kWarp:
        st[sp++] = int64_t(warp_);
        break;
      case NodeKind::kCtaid:
        st[sp++] = int64_t(cta_[n->slot]);
        break;
      case NodeKind::kLane:
      case NodeKind::kTid: {  // not in a uniform expression; evaluate it the general way
        Val r = eval(uint32_t(&c - p_->exprs.data()));
        return r.k == kV ? r.v[0] : r.a;
      }
      case NodeKind::kUnary:
        st[sp - 1] = scalar_op(n->op, st[sp - 1], 0);
        break;
      case NodeKind::kBinary:
        st[sp - 2] = scalar_op(n->op, st[sp - 2], st[sp - 1]);
        --sp;
        break;
      case NodeKind::kSelect:
        st[sp - 3] = st[sp - 3] ? st[sp - 2] : st[sp - 1];
        sp -= 2;
        break;
    }
  }
  return st[0];
}

uint32_t Evaluator::mask_of(uint32_t id, uint32_t mask) {
  const CExpr& c = p_->exprs[id];
  if (c.u == Uniformity::kConst) return c.value ? mask : 0;
  if (c.u == Uniformity::kUniform) return eval_scalar(c) ? mask : 0;
  Val v = eval(id);
  if (v.k == kU) return v.a ? mask : 0;
  int64_t row[kWarpSize];
  const int64_t* p = lane_values(v, row);
  uint32_t m = 0;
  for (int l = 0; l < kWarpSize; ++l) m |= uint32_t(p[l] != 0) << l;
  return m & mask;
}

}  // namespace gtsim::ir
