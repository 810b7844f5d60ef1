// WarpExecutor: walks the compiled code of one warp, producing DynInst records on demand.
#include <algorithm>
#include <bit>
#include <initializer_list>
#include <vector>

#include "kernels_ir/exec/eval.hpp"
#include "kernels_ir/exec/program_impl.hpp"
#include "kernels_ir/exec/simt_stack.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {

struct WarpExecutor::State {
  const Program::Impl* P = nullptr;
  uint32_t lanes = 0, live = 0;
  Evaluator ev;
  SimtStack stack;
  int64_t tmp[kWarpSize] = {}, tmp2[kWarpSize] = {};
  struct LoopRun {
    int64_t trip = 0, iter = 0;  // the warp's trip count (max over its lanes) and iterations started
  };
  std::vector<LoopRun> runs;  // per Program::Impl::loop_ctl
  // loop-control instructions to hand out before the next op
  uint32_t pend[2] = {}, npend = 0, pend_at = 0, pend_mask = 0;
  uint32_t skip_loop = kNoExpr;  // a requested skip (skip_iterations), applied at that loop's next increment
  int64_t skip_n = 0;

  void loop_start(const Op& init, uint32_t mask);
  void pending(std::initializer_list<uint32_t> ids, uint32_t mask);

  void write(uint32_t slot, const Val& v, uint32_t mask);
  void write_lanes(uint32_t slot, const int64_t* v, uint32_t mask) { write(slot, Val{0, 0, v, kV}, mask); }
  uint16_t reg_id(const RegRef& r);
  void addresses(const MemRef& m, uint64_t* out);
  void emit(const CInst& ci, uint32_t sid, uint32_t mask, DynInst& out);
  void values(const CInst& ci, uint32_t act, const DynInst& out);
  bool step(SimtEntry& t);
  void loop_inc(const Op& op, uint32_t mask);
  uint32_t loop_test(const Op& op, uint32_t mask);
};

void WarpExecutor::State::write(uint32_t slot, const Val& v, uint32_t mask) {
  Slot& s = ev.slots[slot];
  if (P->slots[slot].uniform || (mask & lanes) == lanes) {
    s.k = v.k, s.a = v.a, s.s = v.s;
    if (v.k == kV && v.v != s.v)
      for (int l = 0; l < kWarpSize; ++l) s.v[l] = v.v[l];
    return;
  }
  if (!mask) return;
  int64_t row[kWarpSize];
  const int64_t* src = lane_values(v, row);
  if (s.k != kV) lane_values(Val{s.a, s.s, nullptr, s.k}, s.v), s.k = kV;
  for (uint32_t m = mask; m; m &= m - 1) {
    int l = std::countr_zero(m);
    s.v[l] = src[l];
  }
}

uint16_t WarpExecutor::State::reg_id(const RegRef& r) {
  if (r.idx == kNoExpr) return r.base;
  int64_t i = ev.eval_u(r.idx);
  if (i < 0 || i >= r.count) {
    const CExpr& c = P->exprs[r.idx];  // the index expression's operator (last postfix node) gives the place
    const Node* at = c.count ? &P->nodes[c.first + c.count - 1] : nullptr;
    throw InputError(SourcePos{P->file, at ? at->line : 0, at ? at->col : 0},
                     "register array index " + std::to_string(i) + " out of range at run time, expected 0 .. " +
                         std::to_string(r.count - 1));
  }
  return uint16_t(r.base + i);
}

void WarpExecutor::State::addresses(const MemRef& m, uint64_t* out) {
  Val x = ev.eval(m.idx);
  uint64_t e = m.elem;
  if (x.k == kV) {
    for (int l = 0; l < kWarpSize; ++l) out[l] = m.base + uint64_t(x.v[l]) * e;
  } else {
    uint64_t a = m.base + uint64_t(x.a) * e, s = uint64_t(x.s) * e;
    for (int l = 0; l < kWarpSize; ++l) out[l] = a + uint64_t(l) * s;
  }
}

void WarpExecutor::State::values(const CInst& ci, uint32_t act, const DynInst& out) {
  if (ci.n_dst == 0 || !ci.value_needed) return;
  uint32_t d = out.dst[0];
  switch (ci.form) {
    case Form::kIntAlu:
    case Form::kIExpr:
      if (ci.value != kNoExpr) write(d, ev.eval(ci.value), act);
      return;
    case Form::kLoad:
    case Form::kAtom: {
      const BufInit* bi = ci.m1.buffer >= 0 ? P->inits[size_t(ci.m1.buffer)].get() : nullptr;
      if (!bi || bi->kind == InitKind::kNone || bi->kind == InitKind::kZero || ci.form == Form::kAtom) {
        write(d, Val{0}, act);
        return;
      }
      for (int l = 0; l < kWarpSize; ++l) tmp[l] = (act >> l & 1) ? bi->value_at(out.addr[l]) : 0;
      write_lanes(d, tmp, act);
      return;
    }
    case Form::kShfl: {
      const int64_t* sv = lane_values(ev.eval(ci.shfl_src), tmp2);
      if (sv != tmp2)
        for (int l = 0; l < kWarpSize; ++l) tmp2[l] = sv[l];
      const int64_t* lv = lane_values(ev.eval(ci.value), tmp);
      int64_t res[kWarpSize];
      for (int l = 0; l < kWarpSize; ++l) {
        int64_t src = ci.shfl == ShflMode::kBfly   ? (l ^ lv[l])
                      : ci.shfl == ShflMode::kUp   ? l - lv[l]
                      : ci.shfl == ShflMode::kDown ? l + lv[l]
                                                   : lv[l];
        res[l] = src >= 0 && src < kWarpSize && (act >> src & 1) ? tmp2[src] : tmp2[l];
      }
      write_lanes(d, res, act);
      return;
    }
    default:
      return;
  }
}

void WarpExecutor::State::emit(const CInst& ci, uint32_t sid, uint32_t mask, DynInst& out) {
  uint32_t act = ci.pred == kNoExpr ? mask : ev.mask_of(ci.pred, mask);
  out.op = ci.op, out.n_dst = ci.n_dst, out.n_src = ci.n_src, out.access_bytes = ci.access_bytes;
  out.dtype = ci.dtype, out.cache_global = ci.cache_global, out.int_mad = ci.int_mad;
  for (int i = 0; i < kMaxDst; ++i) out.dst[i] = i < ci.n_dst ? reg_id(ci.dst[i]) : kNoReg;
  for (int i = 0; i < kMaxSrc; ++i) out.src[i] = i < ci.n_src ? reg_id(ci.src[i]) : kNoReg;
  out.active = act, out.live = live, out.static_id = sid, out.mma = ci.mma;
  out.imm = ci.imm == kNoExpr ? 0 : int32_t(ev.eval_u(ci.imm));
  // wgmma: each of the warpgroup's 4 warps issues it and does a quarter of its 2 * 64 * N * K
  out.flops = ci.op == OpClass::kMma     ? (act ? ci.mma.flops() : 0)
              : ci.op == OpClass::kWgmma ? (act ? ci.mma.flops() / 4 : 0)
                                         : uint64_t(ci.flops_lane) * std::popcount(act);
  out.addr_active = 0;
  if (ci.vec != kNoExpr) out.access_bytes = uint8_t(ev.eval_u(ci.vec) * ci.m1.elem);
  if (ci.m1.idx != kNoExpr) addresses(ci.m1, out.addr), out.addr_active = act & ci.addr_lanes;
  if (ci.op == OpClass::kCpAsync && ci.value != kNoExpr) {  // src-size: lanes copying 0 bytes read nothing
    const int64_t* sz = lane_values(ev.eval(ci.value), tmp);
    for (uint32_t m = out.addr_active; m; m &= m - 1)
      if (sz[std::countr_zero(m)] <= 0) out.addr_active &= ~(1u << std::countr_zero(m));
  }
  if (ci.m2.idx != kNoExpr) {
    addresses(ci.m2, out.addr2);
    if (ci.op == OpClass::kMbarInit || ci.op == OpClass::kMbarArrive || ci.op == OpClass::kMbarWait ||
        ci.op == OpClass::kTmaLoad)
      out.addr2[0] = out.addr2[act ? std::countr_zero(act) : 0];
  }
  if (ci.op == OpClass::kTmaLoad) {  // one copy per warp instruction, from the first active lane's operands
    const int first = act ? std::countr_zero(act) : 0;
    out.addr[0] = out.addr[first];
    out.addr_active = act ? 1u : 0u;
    const uint64_t elem = ci.m1.elem;
    out.box_rows = uint32_t(std::clamp<int64_t>(ev.eval_u(ci.box[0]), 0, 1 << 20));
    out.box_row_bytes = uint32_t(std::clamp<int64_t>(ev.eval_u(ci.box[1]), 0, 1 << 20) * int64_t(elem));
    out.box_stride = uint64_t(std::max<int64_t>(ev.eval_u(ci.box[2]), 0)) * elem;
    out.access_bytes = 0;
  }
  values(ci, act, out);
}

// Trip count of a loop that starts now: max over the lanes in `mask` of ceil((hi - lo) / step), >= 0.
void WarpExecutor::State::loop_start(const Op& init, uint32_t mask) {
  const Op& test = P->code[&init - P->code.data() + 1];
  int64_t step = ev.eval_u(test.d);
  auto trip = [step](int64_t lo, int64_t hi) -> int64_t {
    __int128 span = step > 0 ? __int128(hi) - lo : __int128(lo) - hi, st = step > 0 ? __int128(step) : -__int128(step);
    return step == 0 || span <= 0 ? 0 : int64_t((span + st - 1) / st);
  };
  int64_t t = 0;
  const Slot& s = ev.slots[init.a];
  if (P->slots[init.a].uniform) {
    t = trip(s.a, ev.eval_u(test.b));
  } else {
    int64_t row[kWarpSize];
    const int64_t* vp = lane_values(Val{s.a, s.s, s.v, s.k}, row);
    const int64_t* hp = lane_values(ev.eval(test.b), tmp);
    for (uint32_t m = mask; m; m &= m - 1) t = std::max(t, trip(vp[std::countr_zero(m)], hp[std::countr_zero(m)]));
  }
  runs[init.loop] = LoopRun{t, 0};
}

void WarpExecutor::State::pending(std::initializer_list<uint32_t> ids, uint32_t mask) {
  npend = 0, pend_at = 0, pend_mask = mask;
  for (uint32_t id : ids) pend[npend++] = id;
}

uint32_t WarpExecutor::State::loop_test(const Op& op, uint32_t mask) {
  int64_t step = ev.eval_u(op.d);
  if (P->slots[op.a].uniform) {
    int64_t v = ev.slots[op.a].a, hi = ev.eval_u(op.b);
    return (step > 0 ? v < hi : v > hi) ? mask : 0;
  }
  const Slot& s = ev.slots[op.a];
  int64_t row[kWarpSize];
  const int64_t* vp = lane_values(Val{s.a, s.s, s.v, s.k}, row);
  const int64_t* hp = lane_values(ev.eval(op.b), tmp);
  uint32_t m = 0;
  for (int l = 0; l < kWarpSize; ++l) m |= uint32_t(step > 0 ? vp[l] < hp[l] : vp[l] > hp[l]) << l;
  return m & mask;
}

void WarpExecutor::State::loop_inc(const Op& op, uint32_t mask) {
  int64_t step = ev.eval_u(op.b);
  Slot& s = ev.slots[op.a];
  if (P->slots[op.a].uniform || ((mask & lanes) == lanes && s.k != kV)) {
    s.a = int64_t(uint64_t(s.a) + uint64_t(step));
    return;
  }
  if (s.k != kV) lane_values(Val{s.a, s.s, nullptr, s.k}, s.v), s.k = kV;
  for (uint32_t m = mask; m; m &= m - 1) s.v[std::countr_zero(m)] += step;
}

// Executes one non-instruction op of the top path; returns false if `t` may be stale (stack changed).
bool WarpExecutor::State::step(SimtEntry& t) {
  const Op& op = P->code[t.pc];
  switch (op.k) {
    case OpK::kLet:
      if (P->exprs[op.b].u == Uniformity::kUniform && P->slots[op.a].uniform) {
        Slot& sl = ev.slots[op.a];
        sl.k = kU, sl.a = ev.eval_u(op.b), sl.s = 0;
      } else {
        write(op.a, ev.eval(op.b), t.mask);
      }
      ++t.pc;
      return true;
    case OpK::kJump:
      t.pc = op.a;
      return true;
    case OpK::kLoopInit:
      write(op.a, ev.eval(op.b), t.mask);
      if (op.loop != kNoExpr) loop_start(op, t.mask);
      if (op.divergent) {
        stack.enter_loop(t.pc + 1, op.c);
        return false;
      }
      ++t.pc;
      return true;
    case OpK::kLoopTest: {
      uint32_t cont = loop_test(op, t.mask);
      if (!cont)
        t.pc = op.c;
      else
        t.mask = cont, ++t.pc;
      if (cont && op.loop != kNoExpr) {  // a group starts: counter update and exit test (hoisted, as ptxas does)
        const LoopCtl& lc = P->loop_ctl[op.loop];
        const LoopRun& r = runs[op.loop];
        if (r.iter % lc.unroll == 0 || r.iter >= r.trip) pending({lc.iadd, lc.setp}, cont);
      }
      return true;
    }
    case OpK::kLoopInc:
      if (op.loop != kNoExpr) {  // a group ends: the backward branch
        const LoopCtl& lc = P->loop_ctl[op.loop];
        LoopRun& r = runs[op.loop];
        if (r.iter % lc.unroll == lc.unroll - 1 || r.iter >= r.trip - 1) pending({lc.bra}, t.mask);
        ++r.iter;
        if (op.loop == skip_loop) {  // sampling: the skipped iterations' increments at once
          int64_t n = std::min(skip_n, r.trip - 1 - r.iter);
          skip_loop = kNoExpr;
          if (n > 0) {
            r.iter += n;
            Slot& v = ev.slots[op.a];
            v.a = int64_t(uint64_t(v.a) + uint64_t(n) * uint64_t(ev.eval_u(op.b)));
          }
        }
      }
      loop_inc(op, t.mask);
      t.pc = op.c;
      return true;
    case OpK::kIf: {
      uint32_t taken = ev.mask_of(op.a, t.mask);
      if (taken == t.mask)
        ++t.pc;
      else if (!taken)
        t.pc = op.b;
      else {
        stack.diverge(taken, t.pc + 1, op.b, op.c, op.d != 0);
        return false;
      }
      return true;
    }
    case OpK::kExit:
      live &= ~t.mask;
      stack.exit_lanes(t.mask);
      return false;
    case OpK::kInst:
      return true;
  }
  return true;
}

WarpExecutor::WarpExecutor(const Program& program, Dim3 ctaid, uint32_t warp_in_cta) : s_(std::make_unique<State>()) {
  const Program::Impl& P = program.impl();
  s_->P = &P;
  uint32_t threads = program.threads_per_cta();
  for (int l = 0; l < kWarpSize; ++l)
    if (uint64_t(warp_in_cta) * kWarpSize + l < threads) s_->lanes |= 1u << l;
  s_->live = s_->lanes;
  int64_t tv[3][kWarpSize];
  for (int l = 0; l < kWarpSize; ++l) {
    uint64_t t = uint64_t(warp_in_cta) * kWarpSize + l;
    tv[0][l] = int64_t(t % P.block.x), tv[1][l] = int64_t(t / P.block.x % P.block.y);
    tv[2][l] = int64_t(t / (uint64_t(P.block.x) * P.block.y));
  }
  uint32_t cta[3] = {ctaid.x, ctaid.y, ctaid.z};
  s_->ev.init(&P, cta, warp_in_cta, tv);
  s_->runs.resize(P.loop_ctl.size());
  s_->stack.reset(s_->live, 0, 2 * P.max_nest + 4);
  if (!s_->live) s_->stack.pop();
}

WarpExecutor::~WarpExecutor() = default;
WarpExecutor::WarpExecutor(WarpExecutor&&) noexcept = default;
WarpExecutor& WarpExecutor::operator=(WarpExecutor&&) noexcept = default;

int64_t WarpExecutor::loop_iterations(uint32_t loop) const { return s_->runs[loop].iter; }
int64_t WarpExecutor::loop_trip(uint32_t loop) const { return s_->runs[loop].trip; }

void WarpExecutor::skip_iterations(uint32_t loop, int64_t n) {
  if (n <= 0 || !s_->P->loop_ctl[loop].uniform) return;
  s_->skip_loop = loop;
  s_->skip_n = n;
}

bool WarpExecutor::next(DynInst& out) {
  State& s = *s_;
  const Program::Impl& P = *s.P;
  while (!s.stack.empty()) {
    if (s.pend_at < s.npend) {
      uint32_t id = s.pend[s.pend_at++];
      s.emit(P.insts[id], id, s.pend_mask, out);
      return true;
    }
    SimtEntry& t = s.stack.top();
    if (t.mask == 0 || t.pc == t.rpc) {
      s.stack.pop();
      continue;
    }
    const Op& op = P.code[t.pc];
    if (op.k == OpK::kInst) {
      ++t.pc;
      s.emit(P.insts[op.a], op.a, t.mask, out);
      return true;
    }
    s.step(t);
  }
  return false;
}

}  // namespace gtsim::ir
