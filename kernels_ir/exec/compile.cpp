// AST -> Program::Impl: header, name resolution, expressions (constant folding, uniformity).
#include "kernels_ir/exec/compile.hpp"

#include <algorithm>
#include <bit>
#include <tuple>

#include "kernels_ir/checked_int.hpp"
#include "kernels_ir/printer.hpp"

namespace gtsim::ir {

void Compiler::error(const Loc& l, const std::string& msg) {
  if (!quiet_) diags_.push_back(Diagnostic{SourcePos{k_.file, l.line, l.col}, msg});
}

std::string Compiler::where(const Loc& l) const { return SourcePos{k_.file, l.line, l.col}.str(); }

const Binding* Compiler::lookup(const std::string& name) const {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
    if (it->first == name) return &it->second;
  auto r = regs_.find(name);
  return r == regs_.end() ? nullptr : &r->second;
}

bool Compiler::builtin(const std::string& n, Node& node, Uniformity& u) const {
  static constexpr const char* kDims[] = {"x", "y", "z"};
  uint32_t g[3] = {P.grid.x, P.grid.y, P.grid.z}, b[3] = {P.block.x, P.block.y, P.block.z};
  if (n == "lane") {
    node.kind = NodeKind::kLane;
    u = Uniformity::kVarying;
    return true;
  }
  if (n == "warp") {
    node.kind = NodeKind::kWarp;
    u = Uniformity::kUniform;
    return true;
  }
  for (uint32_t d = 0; d < 3; ++d) {
    std::string s = std::string(".") + kDims[d];
    if (n == "tid" + s) {
      node.kind = NodeKind::kTid, node.slot = d, u = Uniformity::kVarying;
      return true;
    }
    if (n == "ctaid" + s) {
      node.kind = NodeKind::kCtaid, node.slot = d, u = Uniformity::kUniform;
      return true;
    }
    if (n == "ntid" + s) {
      node.kind = NodeKind::kConst, node.c = b[d], u = Uniformity::kConst;
      return true;
    }
    if (n == "nctaid" + s) {
      node.kind = NodeKind::kConst, node.c = g[d], u = Uniformity::kConst;
      return true;
    }
  }
  return false;
}

Uniformity Compiler::gen_name(const Expr& e, std::vector<Node>& out, std::vector<uint16_t>* rr) {
  Node n;
  n.line = e.loc.line, n.col = e.loc.col;
  Uniformity u = Uniformity::kConst;
  const Binding* b = lookup(e.name);
  if (b && b->k == Binding::kConst) {
    n.c = b->value;
  } else if (b && (b->k == Binding::kSlot || b->k == Binding::kReg)) {
    n.kind = NodeKind::kSlot, n.slot = b->slot;
    u = b->uniform ? Uniformity::kUniform : Uniformity::kVarying;
    if (b->k == Binding::kReg && rr) rr->push_back(uint16_t(b->slot));
  } else if (b && b->k == Binding::kRegArr) {
    error(e.loc, "register array '" + e.name + "' used without an index, expected " + e.name + "[INDEX]");
  } else if (!builtin(e.name, n, u)) {
    std::string extra =
        bufs_.count(e.name) || shared_.count(e.name) ? " (a buffer is only an operand of a memory instruction)" : "";
    error(e.loc,
          "undefined name '" + e.name + "'" + extra +
              ", expected a parameter, let, loop variable, register or builtin (tid.x, lane, warp, ctaid.x, ...)");
  }
  out.push_back(n);
  return u;
}

Uniformity Compiler::gen(const Expr& e, std::vector<Node>& out, uint32_t pos, uint32_t& depth,
                         std::vector<uint16_t>* rr) {
  depth = std::max(depth, pos + 1);
  if (e.op == ExprOp::kNum) {
    out.push_back(Node{NodeKind::kConst, ExprOp::kNum, 0, 0, e.num, e.loc.line, e.loc.col});
    return Uniformity::kConst;
  }
  if (e.op == ExprOp::kName) return gen_name(e, out, rr);
  if (e.op == ExprOp::kIndex) {
    const Binding* b = lookup(e.name);
    if (!b || b->k != Binding::kRegArr) {
      error(e.loc, "'" + e.name + "' is not a register array, expected a `reg " + e.name + "[N]` declaration");
      out.push_back(Node{});
      return Uniformity::kConst;
    }
    Uniformity iu = gen(e.args[0], out, pos, depth, nullptr);
    if (iu == Uniformity::kVarying)
      error(e.loc, "register index of '" + e.name + "' varies across lanes, expected a warp-uniform index");
    if (iu == Uniformity::kConst && out.back().kind == NodeKind::kConst) {
      int64_t i = out.back().c;
      if (i < 0 || i >= int64_t(b->count))
        error(e.loc, "register index " + std::to_string(i) + " out of range for " + e.name + "[" +
                         std::to_string(b->count) + "]");
      out.back() =
          Node{NodeKind::kSlot, ExprOp::kNum, b->slot + uint32_t(std::clamp<int64_t>(i, 0, b->count - 1)), 0, 0,
               e.loc.line,      e.loc.col};
      if (rr) rr->push_back(uint16_t(out.back().slot));
      return Uniformity::kVarying;
    }
    out.push_back(Node{NodeKind::kSlotIdx, ExprOp::kNum, b->slot, b->count, 0, e.loc.line, e.loc.col});
    if (rr) rr->push_back(uint16_t(b->slot));  // approximation: the array's first register
    return Uniformity::kVarying;
  }
  // x * 0 and 0 * x are 0 whatever x is (expressions have no side effects): the product is a constant,
  // so a value read only to be multiplied by zero is not computed at run time. The registers it names
  // stay in `rr`: an instruction still waits for them (docs/ir.md).
  if (e.op == ExprOp::kMul && e.args.size() == 2) {
    size_t s0 = out.size();
    Uniformity u0 = gen(e.args[0], out, pos, depth, rr);
    size_t s1 = out.size();
    Uniformity u1 = gen(e.args[1], out, pos + 1, depth, rr);
    auto zero = [&](size_t a, size_t b) { return b - a == 1 && out[a].kind == NodeKind::kConst && out[a].c == 0; };
    if (zero(s0, s1) || zero(s1, out.size())) {
      out.resize(s0);
      out.push_back(Node{NodeKind::kConst, ExprOp::kNum, 0, 0, 0, e.loc.line, e.loc.col});
      return Uniformity::kConst;
    }
    out.push_back(Node{NodeKind::kBinary, e.op, 0, 0, 0, e.loc.line, e.loc.col});
    return std::max(u0, u1);
  }
  // operators and functions; n-ary min/max fold left
  Uniformity u = gen(e.args[0], out, pos, depth, rr);
  for (size_t i = 1; i < e.args.size(); ++i) {
    u = std::max(u, gen(e.args[i], out, pos + uint32_t(i == 1 || e.op != ExprOp::kSelect ? 1 : 2), depth, rr));
    if (e.op != ExprOp::kSelect) out.push_back(Node{NodeKind::kBinary, e.op, 0, 0, 0, e.loc.line, e.loc.col});
  }
  if (e.op == ExprOp::kSelect) out.push_back(Node{NodeKind::kSelect, e.op, 0, 0, 0, e.loc.line, e.loc.col});
  if (e.args.size() == 1) out.push_back(Node{NodeKind::kUnary, e.op, 0, 0, 0, e.loc.line, e.loc.col});
  return u;
}

namespace {
// Folds a constant expression with checked arithmetic (kernels_ir/checked_int.hpp): an overflow, a
// division by zero or a bad shift count is reported in *why with the operator's node in *at. A problem
// in an operand the result does not depend on (the operand select does not pick, the right side of a
// && whose left side is 0 or of a || whose left side is not) is ignored, as the run time ignores it.
int64_t fold(const std::vector<Node>& nodes, std::string* why, const Node** at) {
  struct V {
    int64_t v = 0;
    int bad = -1;  // index into `errs`
  };
  std::vector<V> st;
  std::vector<std::pair<const Node*, std::string>> errs;
  auto apply = [&](const Node& n, V a, V b) -> V {
    if (a.bad >= 0) return a;
    if (n.op == ExprOp::kLAnd && a.v == 0) return V{0};
    if (n.op == ExprOp::kLOr && a.v != 0) return V{1};
    if (b.bad >= 0) return b;
    std::string w;
    if (auto r = checked_op(n.op, a.v, b.v, &w)) return V{*r};
    errs.push_back({&n, w});
    return V{0, int(errs.size() - 1)};
  };
  for (const auto& n : nodes) {
    if (n.kind == NodeKind::kConst) {
      st.push_back(V{n.c});
      continue;
    }
    if (n.kind == NodeKind::kUnary) {
      st.back() = apply(n, st.back(), V{});
      continue;
    }
    if (n.kind == NodeKind::kSelect) {
      V c = st[st.size() - 3], a = st[st.size() - 2], b = st.back();
      st.resize(st.size() - 2);
      st.back() = c.bad >= 0 ? c : c.v ? a : b;
      continue;
    }
    V b = st.back();
    st.pop_back();
    st.back() = apply(n, st.back(), b);
  }
  if (st.empty()) return 0;
  if (st.back().bad >= 0) {
    *why = errs[size_t(st.back().bad)].second;
    *at = errs[size_t(st.back().bad)].first;
    return 0;
  }
  return st.back().v;
}

bool has_div_by_const_zero(const std::vector<Node>& nodes) {
  for (size_t i = 1; i < nodes.size(); ++i)
    if (nodes[i].kind == NodeKind::kBinary &&
        (nodes[i].op == ExprOp::kDiv || nodes[i].op == ExprOp::kMod || nodes[i].op == ExprOp::kCdiv) &&
        nodes[i - 1].kind == NodeKind::kConst && nodes[i - 1].c == 0)
      return true;
  return false;
}
}  // namespace

uint32_t Compiler::expr(const Expr& e, std::vector<uint16_t>* rr) {
  std::vector<Node> nodes;
  uint32_t depth = 0;
  CExpr c;
  c.u = gen(e, nodes, 0, depth, rr);
  bool div0 = has_div_by_const_zero(nodes);
  if (div0) error(e.loc, "division by zero in '" + print_expr(e) + "', expected a nonzero divisor");
  if (c.u == Uniformity::kConst) {
    std::string why;
    const Node* at = nullptr;
    c.value = fold(nodes, &why, &at);
    if (at && !div0) error(Loc{at->line, at->col}, "constant expression '" + print_expr(e) + "': " + why);
  } else {
    c.first = uint32_t(P.nodes.size()), c.count = uint32_t(nodes.size()), c.depth = depth;
    P.nodes.insert(P.nodes.end(), nodes.begin(), nodes.end());
    P.max_depth = std::max(P.max_depth, depth);
  }
  P.exprs.push_back(c);
  return uint32_t(P.exprs.size() - 1);
}

int64_t Compiler::const_eval(const Expr& e, const std::string& what) {
  uint32_t id = expr(e);
  if (cx(id).u != Uniformity::kConst)
    error(e.loc, what + " '" + print_expr(e) + "' is not a constant, expected an expression of parameters");
  return cx(id).value;
}

void Compiler::bind_params() {
  for (const auto& [name, v] : given_) {
    bool known = false;
    for (const auto& p : k_.params) known |= p.name == name;
    if (!known) {
      std::string list;
      for (const auto& p : k_.params) list += (list.empty() ? "" : ", ") + p.name;
      error(k_.loc, "unknown parameter '" + name + "' for kernel " + k_.name +
                        ", expected one of: " + (list.empty() ? "(none)" : list));
    }
  }
  for (const auto& p : k_.params) {
    int64_t v = 0;
    if (auto it = given_.find(p.name); it != given_.end())
      v = it->second;
    else if (p.def)
      v = const_eval(*p.def, "default of " + p.name);
    else
      error(p.loc, "parameter '" + p.name + "' has no default and no value was given, expected " + p.name + "=VALUE");
    P.params[p.name] = v;
    scope_.push_back({p.name, Binding{Binding::kConst, v}});
  }
  // kernel-scope lets that are constants are usable in the header
  quiet_ = true;
  for (const auto& s : k_.body) {
    if (s.kind != StmtKind::kLet) continue;
    uint32_t id = expr(s.e[0]);
    if (cx(id).u == Uniformity::kConst) scope_.push_back({s.name, Binding{Binding::kConst, cx(id).value}});
  }
  quiet_ = false;
}

void Compiler::header() {
  auto dims = [&](const std::vector<Expr>& v, const char* what, Dim3& d) {
    if (v.empty()) {
      error(k_.loc, std::string("kernel has no '") + what + "', expected e.g. '" + what + " 128'");
      return;
    }
    uint32_t* f[3] = {&d.x, &d.y, &d.z};
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t x = const_eval(v[i], what);
      if (x < 1 || x > int64_t(UINT32_MAX))
        error(v[i].loc,
              std::string(what) + " dimension " + std::to_string(x) + " is out of range, expected 1 .. 2^32-1");
      else
        *f[i] = uint32_t(x);
    }
  };
  dims(k_.grid, "grid", P.grid);
  dims(k_.block, "block", P.block);
  P.regs = 32;
  if (k_.regs) {
    int64_t r = const_eval(*k_.regs, "regs");
    if (r < 1 || r > 65535)
      error(k_.regs->loc, "regs " + std::to_string(r) + " is out of range, expected 1 .. 65535 registers per thread");
    else
      P.regs = uint32_t(r);
  }
  buffers();
  shared_arrays();
}

void Compiler::buffers() {
  uint64_t cursor = uint64_t(1) << 32;
  for (const auto& b : k_.buffers) {
    if (bufs_.count(b.name) || lookup(b.name))
      error(b.loc, "'" + b.name + "' is declared twice, expected unique names");
    BufferInfo info;
    info.name = b.name, info.dtype = b.dtype;
    // Element count and bytes: a buffer must fit the simulated 64-bit address space with room to
    // spare (kMaxBufferBytes), so every address computation below stays exact.
    constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 48;
    uint64_t n = 1;
    bool too_big = false;
    for (const auto& s : b.shape) {
      int64_t d = const_eval(s, "buffer shape");
      if (d < 0) error(s.loc, "negative buffer dimension " + std::to_string(d) + ", expected >= 0");
      too_big = too_big || __builtin_mul_overflow(n, uint64_t(std::max<int64_t>(d, 0)), &n);
    }
    too_big = too_big || __builtin_mul_overflow(n, uint64_t(dtype_bytes(b.dtype)), &info.bytes) ||
              info.bytes > kMaxBufferBytes;
    if (too_big) {
      error(b.loc, "buffer '" + b.name + "' is larger than 2^48 bytes (256 TiB), expected a smaller shape");
      info.bytes = 0;
    }
    uint64_t align = 256;
    if (b.align) {
      int64_t a = const_eval(*b.align, "align");
      if (a < 1 || a > (int64_t(1) << 30) || !std::has_single_bit(uint64_t(a)))
        error(b.align->loc,
              "align " + std::to_string(a) + " is not a power of two up to 2^30, expected 1, 2, 4, ... bytes");
      else
        align = uint64_t(a);
    }
    uint64_t page = std::max<uint64_t>(4096, align);
    auto placed = placement_ ? placement_->find(b.name) : BufferPlacement::const_iterator{};
    const bool own_region = placement_ && placed != placement_->end();
    const uint64_t start = own_region ? placed->second : cursor;
    info.base = (start + page - 1) / page * page;
    if (align < 256) info.base += align;  // a multiple of align but not of 2*align
    if (!own_region) cursor = info.base + std::max<uint64_t>(info.bytes, 1);
    if (cursor > (uint64_t(1) << 56)) {
      error(b.loc, "the kernel's buffers total more than 2^56 bytes, expected fewer or smaller buffers");
      cursor = uint64_t(1) << 32;
    }
    auto init = std::make_unique<BufInit>();
    init->kind = b.init, init->base = info.base, init->bytes = info.bytes, init->elem = uint32_t(dtype_bytes(b.dtype));
    if (b.init == InitKind::kChase) {
      int64_t stride = const_eval(b.init_args[0], "chase stride"), seed = const_eval(b.init_args[1], "chase seed");
      if (stride < int64_t(init->elem) || stride % init->elem)
        error(b.init_args[0].loc, "chase stride " + std::to_string(stride) +
                                      " bytes, expected a positive multiple of the element size " +
                                      std::to_string(init->elem));
      else
        init->stride = uint64_t(stride);
      init->seed = uint64_t(seed);
    }
    bufs_[b.name] = int(P.buffers.size());
    P.buffers.push_back(info);
    P.inits.push_back(std::move(init));
  }
}

void Compiler::shared_arrays() {
  uint64_t off = 0;
  for (const auto& s : k_.shared) {
    if (bufs_.count(s.name) || shared_.count(s.name))
      error(s.loc, "'" + s.name + "' is declared twice, expected unique names");
    off = (off + 127) / 128 * 128;
    int64_t n = const_eval(s.count, "shared array size");
    // Shared memory is at most a few hundred KiB per CTA; the cap keeps every sum below exact.
    constexpr int64_t kMaxShared = int64_t(1) << 31;
    if (n < 0 || n > kMaxShared / 8) {
      error(s.count.loc, "shared array '" + s.name + "' of " + std::to_string(n) + " elements, expected 0 .. 2^28");
      n = 0;
    }
    shared_[s.name] = int(shared_off_.size());
    shared_off_.push_back(off);
    shared_count_.push_back(uint64_t(n));
    off += uint64_t(n) * uint64_t(dtype_bytes(s.dtype));
    if (off > uint64_t(kMaxShared)) {
      error(s.loc, "shared arrays total more than 2^31 bytes, expected at most the machine's shared memory");
      off = 0;
    }
  }
  P.shared_bytes = uint32_t(off);
  if (k_.smem) {
    int64_t sm = const_eval(*k_.smem, "smem");
    if (sm < int64_t(off))
      error(k_.smem->loc, "shared arrays need " + std::to_string(off) + " bytes but smem declares " +
                              std::to_string(sm) + ", expected smem >= the arrays' total");
    else if (sm > int64_t(UINT32_MAX))
      error(k_.smem->loc, "smem " + std::to_string(sm) + " bytes is out of range, expected 0 .. 4294967295");
    else
      P.shared_bytes = uint32_t(sm);
  }
}

void Compiler::run() {
  P.name = k_.name, P.file = k_.file;
  bind_params();
  header();
  collect_regs(k_.body);
  block(k_.body);
  emit(Op{OpK::kExit});
  choose_sample_loop();
  mark_values_read();
}

// An instruction's result value is computed at run time only when some expression reads one of its
// destination registers (an address, a predicate, a bound, an index); otherwise only its timing counts.
void Compiler::mark_values_read() {
  std::vector<uint8_t> read(P.num_regs, 0);
  for (const Node& n : P.nodes) {
    if (n.kind == NodeKind::kSlot && n.slot < P.num_regs) read[n.slot] = 1;
    if (n.kind == NodeKind::kSlotIdx)
      for (uint32_t r = n.slot; r < n.slot + n.count && r < P.num_regs; ++r) read[r] = 1;
  }
  for (CInst& ci : P.insts) {
    ci.value_needed = false;
    for (int i = 0; i < ci.n_dst; ++i) {
      const RegRef& d = ci.dst[i];
      uint32_t n = d.idx == kNoExpr ? 1 : d.count;
      for (uint32_t r = d.base; r < d.base + n && r < P.num_regs; ++r) ci.value_needed |= read[r] != 0;
    }
  }
}

// The loop sampled simulation fast-forwards (docs/sampling.md): a warp-uniform loop with loop control.
// The kernel's `runtime` loops (its main loops over a run-time trip count) come first, the deepest of
// them (the innermost steady state), those whose body holds global memory, cp.async, a barrier or an
// mma before others; without one, the outermost loop whose body holds such work (a grid-stride loop).
void Compiler::choose_sample_loop() {
  auto rank = [&](uint32_t i) {
    const LoopCtl& l = P.loop_ctl[i];
    return l.runtime ? std::tuple{1, int(l.depth), int(l.carries_work)}
                     : std::tuple{0, int(l.carries_work), -int(l.depth)};
  };
  for (uint32_t i = 0; i < P.loop_ctl.size(); ++i) {
    const LoopCtl& l = P.loop_ctl[i];
    if (!l.uniform || (!l.runtime && !l.carries_work)) continue;
    if (P.sample_loop == kNoExpr || rank(i) > rank(P.sample_loop)) P.sample_loop = i;
  }
}

std::unique_ptr<Program::Impl> compile_program(const Kernel& k, const ParamValues& params,
                                               std::vector<Diagnostic>& diags, const BufferPlacement* placement) {
  auto p = std::make_unique<Program::Impl>();
  Compiler(k, params, diags, *p, placement).run();
  return p;
}

}  // namespace gtsim::ir
