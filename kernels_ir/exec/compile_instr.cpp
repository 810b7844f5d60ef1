// AST -> Program::Impl: statements (flat code with jumps) and instructions (DynInst templates).
#include <algorithm>
#include <numeric>

#include "kernels_ir/exec/compile.hpp"
#include "kernels_ir/printer.hpp"

namespace gtsim::ir {

uint32_t Compiler::emit(Op op) {
  P.code.push_back(op);
  return uint32_t(P.code.size() - 1);
}

uint16_t Compiler::new_reg(const std::string& name, uint32_t count) {
  Binding b{count > 1 || count == 0 ? Binding::kRegArr : Binding::kReg, 0, uint32_t(P.slots.size()), count, false};
  for (uint32_t i = 0; i < std::max<uint32_t>(count, 1); ++i) P.slots.push_back(SlotInfo{false});
  P.num_regs = uint32_t(P.slots.size());
  regs_[name] = b;
  return uint16_t(b.slot);
}

void Compiler::collect_regs(const std::vector<Stmt>& body) {
  for (const auto& s : body) {
    if (s.kind == StmtKind::kReg && !regs_.count(s.name)) {
      int64_t n = const_eval(s.e[0], "register array size");
      if (n < 1 || n > 4096) error(s.loc, "register array size " + std::to_string(n) + ", expected 1 .. 4096");
      uint16_t id = new_reg(s.name, uint32_t(std::clamp<int64_t>(n, 1, 4096)));
      regs_[s.name].k = Binding::kRegArr;
      (void)id;
    }
    if (s.kind == StmtKind::kLoop && !loop_regs_.count(&s)) {
      // hidden registers of the loop control (counter, predicate); '%' keeps them out of the name space
      std::string base = "%" + s.name + "@" + std::to_string(s.loc.line) + ":" + std::to_string(s.loc.col);
      uint16_t ctr = new_reg(base + ".ctr", 1);
      new_reg(base + ".p", 1);
      loop_regs_[&s] = ctr;
    }
    if (s.kind == StmtKind::kInstr)
      for (const auto& d : s.instr.dsts)
        if (d.op == ExprOp::kName && !regs_.count(d.name)) new_reg(d.name, 1);
    collect_regs(s.body);
    collect_regs(s.else_body);
  }
  if (P.slots.size() >= kNoReg) error(k_.loc, "too many registers, expected fewer than 65535");
}

void Compiler::block(const std::vector<Stmt>& b) {
  size_t mark = scope_.size();
  for (const auto& s : b) stmt(s);
  scope_.resize(mark);
}

void Compiler::stmt(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kInstr:
      instr(s.instr, s.loc);
      return;
    case StmtKind::kReg:
      return;  // allocated by collect_regs
    case StmtKind::kExit:
      emit(Op{OpK::kExit});
      return;
    case StmtKind::kLoop:
      loop(s);
      return;
    case StmtKind::kIf:
      if_stmt(s);
      return;
    case StmtKind::kLet: {
      if (regs_.count(s.name)) error(s.loc, "'" + s.name + "' is a register, expected a new name for the let");
      uint32_t id = expr(s.e[0]);
      if (cx(id).u == Uniformity::kConst) {
        scope_.push_back({s.name, Binding{Binding::kConst, cx(id).value}});
        return;
      }
      uint32_t slot = uint32_t(P.slots.size());
      bool uni = cx(id).u == Uniformity::kUniform;
      P.slots.push_back(SlotInfo{uni});
      emit(Op{OpK::kLet, false, slot, id});
      scope_.push_back({s.name, Binding{Binding::kSlot, 0, slot, 1, uni}});
      return;
    }
  }
}

void Compiler::loop(const Stmt& s) {
  uint32_t lo = expr(s.e[0]), hi = expr(s.e[1]);
  Expr one{ExprOp::kNum, 1, "", {}, s.loc};
  uint32_t step = expr(s.e.size() > 2 ? s.e[2] : one);
  if (cx(step).u == Uniformity::kVarying)
    error(s.e[2].loc, "loop step varies across lanes, expected a warp-uniform step");
  if (cx(step).u == Uniformity::kConst && cx(step).value == 0)
    error(s.e[2].loc, "loop step is 0, expected a nonzero step");
  bool uni = std::max({cx(lo).u, cx(hi).u}) != Uniformity::kVarying;
  uint32_t slot = uint32_t(P.slots.size());
  P.slots.push_back(SlotInfo{uni});
  uint32_t ctl = loop_control(s, lo, hi, step);
  uint32_t ctl_depth = 0;
  for (uint32_t l : loops_) ctl_depth += P.code[l].loop != kNoExpr;
  const size_t first_inst = P.insts.size();
  uint32_t init = emit(Op{OpK::kLoopInit, !uni, slot, lo});
  uint32_t test = emit(Op{OpK::kLoopTest, false, slot, hi, 0, step});
  P.code[init].loop = P.code[test].loop = ctl;
  if (!uni) divergent_.push_back("the loop at " + where(s.loc) + " has lane-varying bounds");
  scope_.push_back({s.name, Binding{Binding::kSlot, 0, slot, 1, uni}});
  loops_.push_back(init);
  P.max_nest = std::max(P.max_nest, uint32_t(++nest_));
  block(s.body);
  --nest_;
  loops_.pop_back();
  scope_.pop_back();
  if (!uni) divergent_.pop_back();
  P.code[emit(Op{OpK::kLoopInc, false, slot, step, test})].loop = ctl;
  if (ctl != kNoExpr) {
    LoopCtl& lc = P.loop_ctl[ctl];
    lc.uniform = uni && cx(step).u != Uniformity::kVarying;
    lc.runtime = s.runtime_trip;
    lc.depth = ctl_depth;
    for (size_t i = first_inst; i < P.insts.size() && !lc.carries_work; ++i) {
      OpClass op = P.insts[i].op;
      lc.carries_work = op == OpClass::kLdGlobal || op == OpClass::kStGlobal || op == OpClass::kAtomGlobal ||
                        op == OpClass::kCpAsync || op == OpClass::kBarSync || op == OpClass::kMbarWait ||
                        op == OpClass::kMma || op == OpClass::kWgmma || op == OpClass::kTmaLoad;
    }
  }
  uint32_t exit = uint32_t(P.code.size());
  if (ctl != kNoExpr)
    for (uint32_t id : {P.loop_ctl[ctl].iadd, P.loop_ctl[ctl].setp, P.loop_ctl[ctl].bra}) P.loop_of_inst[id] = init;
  P.code[init].c = exit;
  P.code[test].c = exit;
}

// The loop's control instructions (docs/ir.md "Loop control"): none when the loop is fully unrolled
// (a trip count known when the program is built that is at most the unroll factor, unless the loop is
// `runtime` or `unroll 1`), else three static instructions (iadd counter, setp predicate, bra) that the
// executor issues per group of iterations.
uint32_t Compiler::loop_control(const Stmt& s, uint32_t lo, uint32_t hi, uint32_t step) {
  int64_t unroll = kDefaultUnroll;
  if (s.unroll) {
    unroll = const_eval(*s.unroll, "unroll");
    if (unroll < 1 || unroll > 65536) {
      error(s.unroll->loc, "unroll " + std::to_string(unroll) + ", expected 1 .. 65536 iterations per group");
      unroll = 1;
    }
  }
  if (!s.runtime_trip && cx(lo).u == Uniformity::kConst && cx(hi).u == Uniformity::kConst &&
      cx(step).u == Uniformity::kConst) {
    int64_t a = cx(lo).value, b = cx(hi).value, st = cx(step).value;
    __int128 span = st > 0 ? __int128(b) - a : __int128(a) - b, sa = st > 0 ? __int128(st) : -__int128(st);
    __int128 trip = st == 0 || span <= 0 ? 0 : (span + sa - 1) / sa;
    if (trip == 0 || (trip <= unroll && !(s.unroll && unroll == 1))) return kNoExpr;  // fully unrolled: no control
  }
  auto it = loop_regs_.find(&s);
  if (it == loop_regs_.end()) return kNoExpr;  // not reached by collect_regs (cannot happen)
  uint16_t ctr = it->second, pred = uint16_t(ctr + 1);
  LoopCtl lc;
  lc.unroll = uint32_t(unroll);
  std::string u = " (loop control of `" + s.name + "`, unroll " + std::to_string(unroll) + ")";
  SourceLoc where_{k_.file, s.loc.line, s.loc.col};
  auto add = [&](OpClass op, Form form, int n_dst, uint16_t dst, uint16_t src, const std::string& text) {
    CInst ci;
    ci.form = form, ci.op = op, ci.dtype = DType::kI32;
    if (n_dst) ci.dst[ci.n_dst++].base = dst;
    ci.src[ci.n_src++].base = src;
    P.insts.push_back(ci);
    P.infos.push_back(StaticInstInfo{op, text + u, where_});
    P.loop_of_inst.push_back(kNoExpr);  // set to the loop once its kLoopInit exists
    return uint32_t(P.insts.size() - 1);
  };
  std::string c = "%" + s.name + ".ctr", p = "%" + s.name + ".p";
  lc.iadd = add(OpClass::kInt, Form::kIntAlu, 1, ctr, ctr, c + " = iadd " + c + ", " + std::to_string(unroll));
  lc.setp = add(OpClass::kInt, Form::kIntAlu, 1, pred, ctr, p + " = setp.lt " + c + ", hi");
  lc.bra = add(OpClass::kBranch, Form::kAlu, 0, kNoReg, pred, "@" + p + " bra");
  P.loop_ctl.push_back(lc);
  return uint32_t(P.loop_ctl.size() - 1);
}

void Compiler::if_stmt(const Stmt& s) {
  uint32_t cond = expr(s.e[0]);
  bool div = cx(cond).u == Uniformity::kVarying;
  if (div)
    divergent_.push_back("the if at " + where(s.loc) + " has a lane-varying predicate (" + print_expr(s.e[0]) + ")");
  P.max_nest = std::max(P.max_nest, uint32_t(++nest_));
  uint32_t at = emit(Op{OpK::kIf, false, cond, 0, 0, s.has_else});
  bool known = cx(cond).u == Uniformity::kConst, taken = cx(cond).value != 0;
  int dead_then = known && !taken, dead_else = known && taken;
  dead_ += dead_then;
  block(s.body);
  dead_ -= dead_then;
  uint32_t jump = 0;
  if (s.has_else) jump = emit(Op{OpK::kJump});
  P.code[at].b = uint32_t(P.code.size());
  dead_ += dead_else;
  if (s.has_else) block(s.else_body);
  dead_ -= dead_else;
  P.code[at].c = uint32_t(P.code.size());
  if (s.has_else) P.code[jump].a = uint32_t(P.code.size());
  --nest_;
  if (div) divergent_.pop_back();
}

RegRef Compiler::reg_operand(const Expr& e, bool dst, std::vector<uint16_t>* rr) {
  RegRef r;
  if (e.op != ExprOp::kName && e.op != ExprOp::kIndex) return r;
  const Binding* b = lookup(e.name);
  if (!b && e.op == ExprOp::kName) {
    Node tmp;
    Uniformity u;
    if (builtin(e.name, tmp, u)) return r;
    new_reg(e.name, 1);  // implicitly declared by use (value 0)
    b = lookup(e.name);
  }
  if (!b || b->k == Binding::kConst || b->k == Binding::kSlot) {
    if (dst) error(e.loc, "'" + e.name + "' is not a register, expected a register as destination");
    return r;
  }
  if (e.op == ExprOp::kName) {
    if (b->k == Binding::kRegArr)
      error(e.loc, "register array '" + e.name + "' needs an index, expected " + e.name + "[INDEX]");
    r.base = uint16_t(b->slot);
  } else {
    if (b->k != Binding::kRegArr) {
      error(e.loc, "'" + e.name + "' is not a register array, expected `reg " + e.name + "[N]`");
      return r;
    }
    r.base = uint16_t(b->slot), r.count = uint16_t(b->count);
    r.idx = expr(e.args[0]);
    if (cx(r.idx).u == Uniformity::kVarying)
      error(e.loc, "register index varies across lanes, expected a warp-uniform index");
    if (cx(r.idx).u == Uniformity::kConst) {
      int64_t i = cx(r.idx).value;
      if (i < 0 || i >= b->count)
        error(e.loc, "register index " + std::to_string(i) + " out of range for " + e.name + "[" +
                         std::to_string(b->count) + "]");
      r.base = uint16_t(b->slot + std::clamp<int64_t>(i, 0, b->count - 1)), r.count = 1, r.idx = kNoExpr;
    }
  }
  (void)rr;
  return r;
}

MemRef Compiler::mem_operand(const Expr& e, MemSpace space, const std::string& mnem, std::vector<uint16_t>& rr,
                             DType* dt) {
  MemRef m;
  if (e.op != ExprOp::kIndex) {
    error(e.loc, "operand '" + print_expr(e) + "' of " + mnem + " is not a memory reference, expected NAME[INDEX]");
    return m;
  }
  bool is_buf = bufs_.count(e.name), is_sh = shared_.count(e.name);
  if (space == MemSpace::kGlobal && !is_buf) {
    error(e.loc,
          is_sh ? "'" + e.name + "' is a shared array but " + mnem + " needs a global buffer, expected a `buffer` name"
                : "undefined buffer '" + e.name + "', expected a `buffer` declared in the kernel");
    return m;
  }
  if (space == MemSpace::kShared && !is_sh) {
    error(e.loc,
          is_buf ? "'" + e.name + "' is a global buffer but " + mnem + " needs a shared array, expected a `shared` name"
                 : "undefined shared array '" + e.name + "', expected a `shared` declared in the kernel");
    return m;
  }
  if (is_buf) {
    int i = bufs_[e.name];
    m.buffer = i, m.base = P.buffers[size_t(i)].base, *dt = P.buffers[size_t(i)].dtype;
  } else {
    int i = shared_[e.name];
    m.base = shared_off_[size_t(i)], *dt = k_.shared[size_t(i)].dtype;
  }
  m.elem = uint32_t(dtype_bytes(*dt));
  m.idx = expr(e.args[0], &rr);
  return m;
}

// An integer multiply or multiply-add: `imul`, `imad`, or an `iexpr` whose value is a * b, a * b + c
// or c + a * b (one IMAD / IMUL in SASS, which the FP32 FMA datapath also executes; other integer
// instructions, IADD3 / LOP3 / SHF / ISETP, only the INT pipe).
static bool is_int_mad(const Instr& in, const OpDesc& d) {
  if (d.form == Form::kIntAlu) return d.int_op == ExprOp::kMul || d.int_op == ExprOp::kSelect;
  if (d.form != Form::kIExpr || in.srcs.empty()) return false;
  const Expr& e = in.srcs[0];
  if (e.op == ExprOp::kMul) return true;
  if (e.op != ExprOp::kAdd && e.op != ExprOp::kSub) return false;
  return e.args.size() == 2 && (e.args[0].op == ExprOp::kMul || e.args[1].op == ExprOp::kMul);
}

void Compiler::int_value(const Instr& in, const OpDesc& d, CInst& ci) {
  if (in.srcs.empty()) return;
  Expr v;
  const auto& s = in.srcs;
  auto bin = [](ExprOp op, Expr a, Expr b) {
    Expr e{op, 0, "", {}, a.loc};
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
  };
  if (d.int_op == ExprOp::kNum || s.size() < 2)
    v = s[0];
  else if (d.int_op == ExprOp::kSelect && s.size() == 3)
    v = bin(ExprOp::kAdd, bin(ExprOp::kMul, s[0], s[1]), s[2]);
  else
    v = bin(d.int_op, s[0], s[1]);
  ci.value = expr(v);
}

void Compiler::instr(const Instr& in, const Loc& loc) {
  std::string err;
  auto d = decode_mnemonic(in.mnemonic, &err);
  if (!d) {
    error(loc, err);
    return;
  }
  CInst ci;
  ci.form = d->form, ci.op = d->op, ci.dtype = d->dtype, ci.cache_global = d->cache_global,
  ci.flops_lane = d->flops_per_lane;
  ci.mma = d->mma;
  ci.int_mad = is_int_mad(in, *d);
  std::vector<uint16_t> rr;
  if (in.pred) ci.pred = expr(*in.pred, &rr);
  if (d->has_dst && (in.dsts.empty() || in.dsts.size() > size_t(kMaxDst)))
    error(loc, in.mnemonic + " needs a destination, expected `d = " + in.mnemonic + " ...`");
  if (!d->has_dst && !in.dsts.empty()) error(loc, in.mnemonic + " has no destination, expected no `d =`");
  for (size_t i = 0; i < in.dsts.size() && i < size_t(kMaxDst); ++i)
    ci.dst[ci.n_dst++] = reg_operand(in.dsts[i], true, nullptr);
  operands(in, *d, ci, rr, loc);
  for (uint16_t r : rr) {
    bool seen = false;
    for (int i = 0; i < ci.n_src; ++i) seen |= ci.src[i].base == r && ci.src[i].idx == kNoExpr;
    if (!seen && ci.n_src < kMaxSrc) ci.src[ci.n_src++].base = r;
  }
  if (ci.op == OpClass::kBarSync && !divergent_.empty())
    error(loc, "bar.sync under a divergent branch: " + divergent_.back() +
                   "; expected every thread of the CTA to reach the barrier");
  if (ci.op == OpClass::kBarSync && nest_ > 0 && !divergent_.empty()) {
  }
  if ((ci.op == OpClass::kMma || ci.op == OpClass::kWgmma) && dead_ == 0) P.tensor_cores = true;
  if (ci.op == OpClass::kMbarWait) {
    // a pipeline of S stages waits on barrier g % S at iteration g, each use flipping its phase: the
    // stage and parity pattern repeats every 2 S iterations (S: the waited array's length)
    P.uses_mbarriers = true;
    uint64_t len = 24;  // not an array element: 48 iterations, the old quantum
    if (!in.srcs.empty() && in.srcs[0].op == ExprOp::kIndex && shared_.count(in.srcs[0].name))
      len = std::max<uint64_t>(1, shared_count_[size_t(shared_[in.srcs[0].name])]);
    P.mbar_period = std::lcm(P.mbar_period, 2 * len);
  }
  P.insts.push_back(ci);
  P.infos.push_back(StaticInstInfo{ci.op, print_instr(in), SourceLoc{k_.file, loc.line, loc.col}});
  P.loop_of_inst.push_back(loops_.empty() ? kNoExpr : loops_.back());
  emit(Op{OpK::kInst, false, uint32_t(P.insts.size() - 1)});
}

void Compiler::operands(const Instr& in, const OpDesc& d, CInst& ci, std::vector<uint16_t>& rr, const Loc& loc) {
  const auto& s = in.srcs;
  size_t nmem = 0;
  switch (d.form) {
    case Form::kLoad:
    case Form::kStore:
    case Form::kAtom:
    case Form::kRed:
    case Form::kLdMatrix:
    case Form::kStMatrix:
    case Form::kMbarInit:
    case Form::kMbarArrive:
    case Form::kMbarWait:
      nmem = 1;
      break;
    case Form::kCpAsync:
    case Form::kTma:
      nmem = 2;
      break;
    default:
      break;
  }
  size_t nreg = s.size() >= nmem ? s.size() - nmem : 0;
  if (s.size() < nmem || nreg < size_t(d.min_src) || nreg > size_t(d.max_src)) {
    error(loc, in.mnemonic + " takes " + std::to_string(nmem + size_t(d.min_src)) +
                   (d.max_src > d.min_src ? " to " + std::to_string(nmem + size_t(d.max_src)) : std::string()) +
                   " operands, got " + std::to_string(s.size()));
    return;
  }
  auto vec_width = [&](uint32_t elem) {
    uint32_t vec = uint32_t(std::max(d.vec, 1));
    if (d.vec == 0 && in.vec) {
      ci.vec = expr(*in.vec);
      if (cx(ci.vec).u == Uniformity::kVarying)
        error(in.vec->loc, "vector width varies across lanes, expected a uniform width");
      if (cx(ci.vec).u == Uniformity::kConst) {
        int64_t v = cx(ci.vec).value;
        if (v < 1 || v > 64) error(in.vec->loc, "vector width " + std::to_string(v) + ", expected 1 .. 64 elements");
        vec = uint32_t(std::clamp<int64_t>(v, 1, 64)), ci.vec = kNoExpr;
      }
    }
    if (vec * elem > 64 || vec * elem == 0)
      error(loc, "access of " + std::to_string(vec * elem) + " bytes per lane, expected 1 .. 64");
    ci.access_bytes = uint8_t(vec * elem);
  };
  DType dt = DType::kF32;
  switch (d.form) {
    case Form::kLoad:
    case Form::kStore:
    case Form::kAtom:
    case Form::kRed: {
      ci.m1 = mem_operand(s[0], d.space, in.mnemonic, rr, &dt);
      if (d.dtype_given && d.dtype != dt && dtype_bytes(d.dtype) != dtype_bytes(dt))
        error(loc, in.mnemonic + " accesses " + std::string(dtype_name(d.dtype)) + " but '" + s[0].name + "' holds " +
                       std::string(dtype_name(dt)) + ", expected matching element types");
      ci.dtype = dt;
      vec_width(ci.m1.elem);
      if (ci.m1.buffer >= 0) {  // BufferInfo's read / written: which buffers a launch leaves in the L2 dirty
        BufferInfo& b = P.buffers[size_t(ci.m1.buffer)];
        b.read = b.read || d.form != Form::kStore;
        b.written = b.written || d.form != Form::kLoad;
      }
      break;
    }
    case Form::kLdMatrix:
    case Form::kStMatrix:
      ci.m1 = mem_operand(s[0], MemSpace::kShared, in.mnemonic, rr, &dt);
      ci.access_bytes = 16, ci.dtype = dt;
      ci.addr_lanes = d.ldm_rows == 1 ? 0xffu : d.ldm_rows == 2 ? 0xffffu : kFullMask;
      break;
    case Form::kCpAsync:
      ci.m2 = mem_operand(s[0], MemSpace::kShared, in.mnemonic, rr, &dt);
      ci.m1 = mem_operand(s[1], MemSpace::kGlobal, in.mnemonic, rr, &dt);
      if (ci.m1.buffer >= 0) P.buffers[size_t(ci.m1.buffer)].read = true;
      ci.dtype = dt;
      if (d.cp_bytes != 4 && d.cp_bytes != 8 && d.cp_bytes != 16)
        error(loc, "cp.async size " + std::to_string(d.cp_bytes) + " bytes, expected 4, 8 or 16");
      ci.access_bytes = uint8_t(d.cp_bytes);
      break;
    case Form::kMbarInit:
    case Form::kMbarArrive:
    case Form::kMbarWait:
      ci.m2 = mem_operand(s[0], MemSpace::kShared, in.mnemonic, rr, &dt);
      ci.m1 = ci.m2, ci.access_bytes = 8;
      break;
    case Form::kTma: {  // MBAR[i], BUF[j], ROWS, COLS, LD: warp-uniform box dimensions
      ci.m2 = mem_operand(s[0], MemSpace::kShared, in.mnemonic, rr, &dt);
      ci.m1 = mem_operand(s[1], MemSpace::kGlobal, in.mnemonic, rr, &dt);
      if (ci.m1.buffer >= 0) P.buffers[size_t(ci.m1.buffer)].read = true;
      ci.dtype = dt;
      static constexpr const char* kBox[] = {"box rows", "box columns", "row stride (LD)"};
      for (size_t i = 0; i < 3 && i + 2 < s.size(); ++i) {
        ci.box[i] = expr(s[i + 2], &rr);
        if (cx(ci.box[i]).u == Uniformity::kVarying)
          error(s[i + 2].loc,
                std::string(kBox[i]) + " of " + in.mnemonic + " vary across lanes, expected a warp-uniform value");
      }
      return;  // no register operands
    }
    case Form::kMma:
      if (d.op == OpClass::kMma && in.dsts.size() == 1) {
      }
      break;
    default:
      break;
  }
  // register and immediate operands after the memory ones
  for (size_t i = nmem; i < s.size(); ++i) {
    bool imm_form =
        d.form == Form::kWait || d.form == Form::kBar || d.form == Form::kMbarInit || d.form == Form::kMbarWait;
    if (imm_form) {
      ci.imm = expr(s[i]);
      continue;
    }
    if (d.form == Form::kIExpr) {
      ci.value = expr(s[i], &rr);
      continue;
    }
    if ((d.form == Form::kShfl && i == 1) || d.form == Form::kCpAsync) {  // shfl lane / cp.async src-size
      ci.value = expr(s[i], &rr);
      continue;
    }
    RegRef r = reg_operand(s[i], false, &rr);
    if (r.base != kNoReg && ci.n_src < kMaxSrc)
      ci.src[ci.n_src++] = r;
    else if (r.base == kNoReg)
      expr(s[i], &rr);  // immediate: checks names
  }
  if (d.form == Form::kShfl) {
    ci.shfl = d.shfl;
    ci.shfl_src = expr(s[0]);
  }
  if (d.form == Form::kIntAlu) int_value(in, d, ci);
}

}  // namespace gtsim::ir
