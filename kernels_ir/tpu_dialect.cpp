#include "kernels_ir/tpu_dialect.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "kernels_ir/checked_int.hpp"
#include "kernels_ir/ops.hpp"
#include "kernels_ir/printer.hpp"

namespace gtsim::ir {
namespace {

struct VpuOp {
  std::string_view name;
  float alu, trans;
  bool reduce;
};
// Per-element op counts of the named vector instructions (vpu.custom gives its own).
constexpr VpuOp kVpuOps[] = {
    {"add", 1, 0, false},   {"sub", 1, 0, false},       {"mul", 1, 0, false},       {"max", 1, 0, false},
    {"min", 1, 0, false},   {"cast", 1, 0, false},      {"select", 1, 0, false},    {"fma", 2, 0, false},
    {"exp", 0, 1, false},   {"log", 0, 1, false},       {"tanh", 0, 1, false},      {"rsqrt", 0, 1, false},
    {"recip", 0, 1, false}, {"reduce_sum", 1, 0, true}, {"reduce_max", 1, 0, true},
};

const VpuOp* vpu_op(std::string_view m) {
  if (!m.starts_with("vpu.")) return nullptr;
  m.remove_prefix(4);
  for (const auto& o : kVpuOps)
    if (o.name == m) return &o;
  return nullptr;
}

constexpr uint64_t kMaxOps = uint64_t(1) << 22;  // expanded instructions, every loop trip counted

// The names in scope while expanding: parameters, lets and loop variables, newest last (a later
// binding of a name shadows an earlier one). A flat vector of views into the kernel's AST, which
// outlives the expansion: copying it for a trip or a block is one small allocation, not a map.
class Env {
 public:
  const int64_t* find(std::string_view n) const {
    for (auto it = v_.rbegin(); it != v_.rend(); ++it)
      if (it->first == n) return &it->second;
    return nullptr;
  }
  bool count(std::string_view n) const { return find(n) != nullptr; }
  void set(std::string_view n, int64_t x) {
    if (auto* p = const_cast<int64_t*>(find(n)))
      *p = x;
    else
      v_.emplace_back(n, x);
  }

 private:
  std::vector<std::pair<std::string_view, int64_t>> v_;
};

// Whether NAME appears anywhere in an expression, statement or body (as a value, a buffer or a let
// target: over-approximating is safe, it only turns off the shortcut below).
bool mentions(const Expr& e, std::string_view name) {
  if (e.name == name) return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return mentions(a, name); });
}
bool mentions(const std::vector<Stmt>& body, std::string_view name);
bool mentions(const Stmt& s, std::string_view name) {
  auto in = [&](const std::vector<Expr>& v) {
    return std::any_of(v.begin(), v.end(), [&](const Expr& e) { return mentions(e, name); });
  };
  const Instr& i = s.instr;
  return s.name == name || in(s.e) || (s.unroll && mentions(*s.unroll, name)) || mentions(s.body, name) ||
         mentions(s.else_body, name) || (i.vec && mentions(*i.vec, name)) || (i.pred && mentions(*i.pred, name)) ||
         in(i.dsts) || in(i.srcs);
}
bool mentions(const std::vector<Stmt>& body, std::string_view name) {
  return std::any_of(body.begin(), body.end(), [&](const Stmt& s) { return mentions(s, name); });
}

class Expander {
 public:
  Expander(const Kernel& k, std::vector<Diagnostic>& diags) : k_(k), diags_(diags) {}

  TpuProgram run(const ParamValues& params) {
    TpuProgram p;
    p.name = k_.name;
    prog_ = &p;
    Env env;
    for (const auto& pr : k_.params) {
      auto it = params.find(pr.name);
      if (it != params.end())
        env.set(pr.name, it->second);
      else if (pr.def) {
        if (auto v = eval(*pr.def, env)) env.set(pr.name, *v);
      } else
        err(pr.loc, "parameter '" + pr.name + "' has no default and no value was given, expected NAME = VALUE");
    }
    for (const auto& nv : params)  // not a structured binding: clang 14 cannot capture one in a lambda
      if (std::none_of(k_.params.begin(), k_.params.end(), [&](const Param& q) { return q.name == nv.first; }))
        err(k_.loc, "unknown parameter '" + nv.first + "' given, expected one of the kernel's parameters");
    if (!k_.grid.empty() || !k_.block.empty() || k_.regs || k_.smem || !k_.shared.empty())
      err(k_.loc, "grid, block, regs, smem and shared are GPU declarations, not allowed in a tpu_kernel");
    for (const auto& b : k_.buffers) declare(b, env);
    if (!diags_.empty()) return p;
    p.ops = block(k_.body, env);
    return p;
  }

 private:
  const Kernel& k_;
  std::vector<Diagnostic>& diags_;
  TpuProgram* prog_ = nullptr;
  std::map<std::string, std::pair<bool, uint32_t>> bufs_;  // name -> (vmem, index)
  uint64_t emitted_ = 0;
  std::map<const Stmt*, bool> invariant_;  // loop -> its body does not mention its variable

  void err(const Loc& l, const std::string& msg) {
    if (diags_.size() < 50) diags_.push_back({SourcePos{k_.file, l.line, l.col}, msg});
  }

  std::optional<int64_t> eval(const Expr& e, const Env& env) {
    auto arg = [&](size_t i) { return eval(e.args[i], env); };
    switch (e.op) {
      case ExprOp::kNum:
        return e.num;
      case ExprOp::kName: {
        if (const int64_t* v = env.find(e.name)) return *v;
        err(e.loc, "unknown name '" + e.name + "', expected a parameter, let or loop variable" +
                       (bufs_.count(e.name) ? " (a buffer is written NAME[index])" : ""));
        return std::nullopt;
      }
      case ExprOp::kIndex:
        err(e.loc, "'" + e.name + "[...]' is not a value, expected a scalar expression");
        return std::nullopt;
      default:
        break;
    }
    // select, && and || evaluate only the operands they need (a problem in the other is not one).
    if (e.op == ExprOp::kSelect) {
      auto c = arg(0);
      if (!c) return std::nullopt;
      return arg(*c ? 1 : 2);
    }
    if (e.op == ExprOp::kLAnd || e.op == ExprOp::kLOr) {
      auto l = arg(0);
      if (!l) return std::nullopt;
      if ((e.op == ExprOp::kLAnd) == (*l == 0)) return int64_t(e.op == ExprOp::kLOr);
      auto r = arg(1);
      if (!r) return std::nullopt;
      return int64_t(*r != 0);
    }
    // Checked arithmetic (checked_int.hpp): overflow, division by zero, INT64_MIN / -1 and shift
    // counts outside 0 .. 63 are errors at the operator, never a wrap or a trap.
    auto v = arg(0);
    if (!v) return std::nullopt;
    for (size_t i = 1; i < e.args.size() || e.args.size() == 1; ++i) {
      std::optional<int64_t> b = int64_t(0);
      if (e.args.size() > 1 && !(b = arg(i))) return std::nullopt;
      std::string why;
      v = checked_op(e.op, *v, *b, &why);  // min / max fold left over their arguments
      if (!v) {
        err(e.loc, "'" + print_expr(e) + "': " + why);
        return std::nullopt;
      }
      if (e.args.size() == 1) break;
    }
    return v;
  }

  void declare(const BufferDecl& b, const Env& env) {
    if (bufs_.count(b.name) || env.count(b.name)) {
      err(b.loc, "'" + b.name + "' declared twice, expected a new name");
      return;
    }
    std::vector<int64_t> dims;
    for (const auto& d : b.shape) {
      auto v = eval(d, env);
      if (!v) return;
      if (*v <= 0) err(d.loc, "dimension " + std::to_string(*v) + " of '" + b.name + "', expected a positive size");
      dims.push_back(*v);
    }
    uint32_t eb = uint32_t(dtype_bytes(b.dtype));
    if (b.vmem) {
      if (dims.size() != 2) {
        err(b.loc, "vmem '" + b.name + "' has " + std::to_string(dims.size()) + " dimensions, expected [rows, cols]");
        return;
      }
      int64_t slots = 1;
      if (b.slots) {
        auto v = eval(*b.slots, env);
        if (!v) return;
        if (*v < 1 || *v > 64) err(b.slots->loc, "slots " + std::to_string(*v) + ", expected 1 to 64");
        slots = *v;
      }
      if (dims[0] > (int64_t(1) << 30) || dims[1] > (int64_t(1) << 30)) {
        err(b.loc, "vmem '" + b.name + "' of " + std::to_string(dims[0]) + " x " + std::to_string(dims[1]) +
                       ", expected at most 2^30 rows and columns");
        return;
      }
      if (b.has_layout || b.align || b.init != InitKind::kNone)
        err(b.loc, "layout, align and init are HBM buffer options, not allowed on vmem '" + b.name + "'");
      bufs_[b.name] = {true, uint32_t(prog_->vmem.size())};
      prog_->vmem.push_back({b.name, uint64_t(dims[0]), uint64_t(dims[1]), eb, uint32_t(slots)});
    } else {
      uint64_t n = 1;
      bool too_big = false;
      for (auto d : dims) too_big = too_big || __builtin_mul_overflow(n, uint64_t(std::max<int64_t>(d, 0)), &n);
      if (too_big || n > (uint64_t(1) << 48) / eb) {
        err(b.loc, "buffer '" + b.name + "' is larger than 2^48 bytes (256 TiB), expected a smaller shape");
        return;
      }
      bufs_[b.name] = {false, uint32_t(prog_->hbm.size())};
      prog_->hbm.push_back({b.name, n, eb});
    }
  }

  std::vector<TpuOp> block(const std::vector<Stmt>& body, Env env) {
    std::vector<TpuOp> out;
    for (const auto& s : body) {
      if (!diags_.empty()) break;
      switch (s.kind) {
        case StmtKind::kLet: {
          if (bufs_.count(s.name)) err(s.loc, "let '" + s.name + "' shadows a buffer, expected a new name");
          if (auto v = eval(s.e[0], env)) env.set(s.name, *v);
          break;
        }
        case StmtKind::kIf: {
          auto c = eval(s.e[0], env);
          if (!c) break;
          auto part = block(*c ? s.body : s.else_body, env);
          out.insert(out.end(), part.begin(), part.end());
          break;
        }
        case StmtKind::kLoop:
          loop(s, env, out);
          break;
        case StmtKind::kInstr:
          instr(s.instr, env, out);
          break;
        case StmtKind::kReg:
          err(s.loc, "'reg' is a GPU statement, not allowed in a tpu_kernel");
          break;
        case StmtKind::kExit:
          err(s.loc, std::string("'") + (s.is_return ? "return" : "exit") +
                         "' is a GPU statement, not allowed in a tpu_kernel");
          break;
      }
    }
    return out;
  }

  void too_many(const Stmt& loop) {
    err(loop.loc,
        "the kernel expands to more than " + std::to_string(kMaxOps) + " instructions, expected fewer loop trips");
  }

  void loop(const Stmt& s, const Env& env, std::vector<TpuOp>& out) {
    auto lo = eval(s.e[0], env), hi = eval(s.e[1], env);
    std::optional<int64_t> step = 1;
    if (s.e.size() > 2) step = eval(s.e[2], env);
    if (!lo || !hi || !step) return;
    if (*step <= 0) {
      err(s.e[2].loc, "loop step " + std::to_string(*step) + ", expected a positive step");
      return;
    }
    if (s.unroll) eval(*s.unroll, env);
    if (*hi <= *lo) return;
    const uint64_t span = uint64_t(*hi) - uint64_t(*lo);  // no overflow: hi > lo
    const uint64_t n = span / uint64_t(*step) + (span % uint64_t(*step) != 0);
    Env e = env;
    e.set(s.name, *lo);
    int64_t* var = const_cast<int64_t*>(e.find(s.name));
    auto [known, fresh] = invariant_.try_emplace(&s, false);
    if (fresh) known->second = !mentions(s.body, s.name);
    std::vector<TpuOp> first, all;  // all: every trip, once two trips differ
    bool same = true;
    uint64_t trips = 0;
    if (known->second) {
      // The body never reads the loop variable, so every trip expands as the first does: expand one
      // and charge the budget for all of them (what expanding each would have charged).
      const uint64_t before = emitted_;
      first = block(s.body, e);
      if (!diags_.empty()) return;
      const uint64_t per_trip = emitted_ - before + std::max<size_t>(first.size(), 1);
      if (per_trip > (kMaxOps - before) / n) {
        return too_many(s);
      }
      emitted_ = before + per_trip * n;
      trips = n;
    }
    // i + step never overflows: the loop stops once fewer than `step` values remain below hi.
    for (int64_t i = *lo; trips<n; i = uint64_t(*hi) - uint64_t(i)> uint64_t(*step) ? i + *step : *hi, ++trips) {
      *var = i;
      auto it = block(s.body, e);
      if (!diags_.empty()) return;
      if (trips == 0) {
        first = std::move(it);
      } else if (same && it != first) {
        same = false;
        all.reserve(first.size() * (trips + 1) + it.size());
        for (uint64_t t = 0; t < trips; ++t) all.insert(all.end(), first.begin(), first.end());
      }
      if (!same) all.insert(all.end(), it.begin(), it.end());
      // every trip counts (at least 1), so a loop of empty trips is bounded too
      if ((emitted_ += std::max<size_t>(trips == 0 ? first.size() : it.size(), 1)) > kMaxOps) {
        return too_many(s);
      }
    }
    if (trips == 0 || first.empty()) return;
    if (trips == 1) {
      out.insert(out.end(), first.begin(), first.end());
    } else if (same) {
      TpuOp l;
      l.kind = TpuOpKind::kLoop;
      l.count = trips;
      l.loc = s.loc;
      out.push_back(l);
      out.insert(out.end(), first.begin(), first.end());
      TpuOp e;
      e.kind = TpuOpKind::kEndLoop;
      out.push_back(e);
    } else {
      out.insert(out.end(), all.begin(), all.end());
    }
  }

  // A buffer operand NAME[index]: the buffer's index and the evaluated index.
  std::optional<std::pair<uint32_t, int64_t>> buf(const Expr& e, bool vmem, const Env& env, const std::string& what) {
    auto it = e.op == ExprOp::kIndex || e.op == ExprOp::kName ? bufs_.find(e.name) : bufs_.end();
    if (e.op != ExprOp::kIndex || it == bufs_.end() || it->second.first != vmem) {
      err(e.loc, "expected " + what + (vmem ? " (a vmem buffer, NAME[slot])" : " (an HBM buffer, NAME[offset])"));
      return std::nullopt;
    }
    auto v = eval(e.args[0], env);
    if (!v) return std::nullopt;
    uint32_t idx = it->second.second;
    if (vmem) {
      const auto& b = prog_->vmem[idx];
      if (*v < 0 || *v >= int64_t(b.slots)) {
        err(e.args[0].loc,
            "slot " + std::to_string(*v) + " of vmem '" + b.name + "', expected 0 to " + std::to_string(b.slots - 1));
        return std::nullopt;
      }
    } else {
      const auto& b = prog_->hbm[idx];
      if (*v < 0 || uint64_t(*v) >= b.elements) {
        err(e.args[0].loc, "offset " + std::to_string(*v) + " into '" + b.name + "' of " + std::to_string(b.elements) +
                               " elements, expected 0 to " + std::to_string(b.elements - 1));
        return std::nullopt;
      }
    }
    return std::pair{idx, *v};
  }

  std::optional<uint64_t> num(const Expr& e, const Env& env, const std::string& what, int64_t lo, int64_t hi) {
    auto v = eval(e, env);
    if (!v) return std::nullopt;
    if (*v < lo || *v > hi) {
      err(e.loc, what + " " + std::to_string(*v) + ", expected " + std::to_string(lo) + " to " + std::to_string(hi));
      return std::nullopt;
    }
    return uint64_t(*v);
  }

  void instr(const Instr& in, const Env& env, std::vector<TpuOp>& out) {
    const std::string& m = in.mnemonic;
    if (!is_tpu_mnemonic(m)) {
      std::string e;
      if (decode_mnemonic(m, &e))
        err(in.loc, "GPU instruction '" + m + "' in a tpu_kernel, expected dma.*, mxu.*, vpu.* or sync");
      else
        err(in.loc, "unknown TPU instruction '" + m +
                        "', expected dma.load, dma.store, dma.wait, mxu.load_weights, mxu.matmul, vpu.OP or sync");
      return;
    }
    if (in.pred || !in.dsts.empty() || in.vec) {
      err(in.loc, "'" + m + "' takes no predicate, destination or .v(), expected `" + m + " OPERANDS`");
      return;
    }
    const auto& s = in.srcs;
    auto arity = [&](size_t lo, size_t hi, const char* form) {
      if (s.size() >= lo && s.size() <= hi) return true;
      err(in.loc, "'" + m + "' has " + std::to_string(s.size()) + " operands, expected `" + m + " " + form + "`");
      return false;
    };
    const TpuConfigLimits lim;
    TpuOp op;
    op.loc = in.loc;
    auto vshape = [&](size_t i, bool opt) {  // ROWS, COLS at s[i], s[i+1]: within the slot
      const auto& b = prog_->vmem[op.buffer];
      if (opt && s.size() <= i) {
        op.rows = b.rows;
        op.cols = b.cols;
        return true;
      }
      auto r = num(s[i], env, "rows", 1, int64_t(b.rows));
      auto c = num(s[i + 1], env, "cols", 1, int64_t(b.cols));
      if (!r || !c) return false;
      op.rows = *r;
      op.cols = *c;
      return true;
    };
    auto tag = [&](const Expr& e) {
      auto t = num(e, env, "DMA tag", 0, lim.max_tag);
      if (t) {
        op.unit = uint32_t(*t);
        prog_->tags = std::max(prog_->tags, op.unit + 1);
      }
      return bool(t);
    };
    if (m == "dma.load" || m == "dma.store") {
      bool load = m == "dma.load";
      if (!arity(3, 5, load ? "V[slot], H[offset], TAG[, ROWS, COLS]" : "H[offset], V[slot], TAG[, ROWS, COLS]"))
        return;
      if (s.size() == 4) {
        arity(3, 3, load ? "V[slot], H[offset], TAG[, ROWS, COLS]" : "H[offset], V[slot], TAG[, ROWS, COLS]");
        return;
      }
      op.kind = load ? TpuOpKind::kDmaLoad : TpuOpKind::kDmaStore;
      auto v = buf(s[load ? 0 : 1], true, env, load ? "the destination" : "the source");
      auto h = buf(s[load ? 1 : 0], false, env, load ? "the source" : "the destination");
      if (!v || !h) return;
      op.buffer = v->first;
      op.slot = uint32_t(v->second);
      if (prog_->vmem[op.buffer].elt_bytes != prog_->hbm[h->first].elt_bytes)
        err(in.loc, "'" + m + "' between '" + prog_->vmem[op.buffer].name + "' and '" + prog_->hbm[h->first].name +
                        "' of different element sizes, expected the same dtype");
      if (!tag(s[2]) || !vshape(3, true)) return;
    } else if (m == "dma.wait") {
      if (!arity(1, 1, "TAG")) return;
      op.kind = TpuOpKind::kDmaWait;
      if (!tag(s[0])) return;
    } else if (m == "mxu.load_weights" || m == "mxu.matmul") {
      bool lw = m == "mxu.load_weights";
      if (!(lw ? arity(4, 4, "MXU, V[slot], K, N") : arity(3, 4, "MXU, V[slot], M[, PASSES]"))) return;
      op.kind = lw ? TpuOpKind::kLoadWeights : TpuOpKind::kMatmul;
      auto u = num(s[0], env, "MXU", 0, lim.max_mxu);
      auto v = buf(s[1], true, env, lw ? "the weights" : "the left-hand side");
      if (!u || !v) return;
      op.unit = uint32_t(*u);
      op.buffer = v->first;
      op.slot = uint32_t(v->second);
      if (lw) {
        auto k = num(s[2], env, "K", 1, lim.max_dim), n = num(s[3], env, "N", 1, lim.max_dim);
        if (!k || !n) return;
        op.rows = *k;
        op.cols = *n;
      } else {
        auto r = num(s[2], env, "M", 1, lim.max_dim);
        if (!r) return;
        op.rows = *r;
        if (s.size() == 4) {
          auto p = num(s[3], env, "passes", 1, 16);
          if (!p) return;
          op.passes = uint32_t(*p);
        }
      }
    } else if (m == "sync") {
      if (!arity(0, 0, "(no operands)")) return;
      op.kind = TpuOpKind::kSync;
    } else {  // vpu.*
      bool custom = m == "vpu.custom";
      if (!arity(custom ? 6 : 3, custom ? 6 : 3,
                 custom ? "V[slot], ROWS, COLS, ALU, TRANS, REDUCE" : "V[slot], ROWS, COLS"))
        return;
      op.kind = TpuOpKind::kVector;
      auto v = buf(s[0], true, env, "the operand");
      if (!v) return;
      op.buffer = v->first;
      op.slot = uint32_t(v->second);
      if (!vshape(1, false)) return;
      if (custom) {
        auto a = num(s[3], env, "ALU ops", 0, 1000), t = num(s[4], env, "transcendentals", 0, 1000),
             r = num(s[5], env, "REDUCE", 0, 1);
        if (!a || !t || !r) return;
        op.alu = float(*a);
        op.trans = float(*t);
        op.reduce = *r != 0;
      } else {
        const VpuOp* o = vpu_op(m);
        op.alu = o->alu;
        op.trans = o->trans;
        op.reduce = o->reduce;
      }
    }
    out.push_back(op);
  }

  struct TpuConfigLimits {
    int64_t max_tag = 65535, max_mxu = 65535, max_dim = int64_t(1) << 30;
  };
};

void walk(const std::vector<Stmt>& b, const Kernel& k, std::vector<Diagnostic>& d) {
  for (const auto& s : b) {
    if (s.kind == StmtKind::kInstr && is_tpu_mnemonic(s.instr.mnemonic))
      d.push_back({SourcePos{k.file, s.loc.line, s.loc.col},
                   "TPU instruction '" + s.instr.mnemonic + "' in a GPU kernel, expected it in a tpu_kernel"});
    walk(s.body, k, d);
    walk(s.else_body, k, d);
  }
}

}  // namespace

bool is_tpu_mnemonic(std::string_view m) {
  return m == "dma.load" || m == "dma.store" || m == "dma.wait" || m == "mxu.load_weights" || m == "mxu.matmul" ||
         m == "sync" || m == "vpu.custom" || vpu_op(m) != nullptr;
}

std::vector<Diagnostic> tpu_instructions_in_gpu_kernel(const Kernel& k) {
  std::vector<Diagnostic> d;
  for (const auto& b : k.buffers)
    if (b.vmem)
      d.push_back({SourcePos{k.file, b.loc.line, b.loc.col},
                   "vmem '" + b.name + "' in a GPU kernel, expected it in a tpu_kernel"});
  walk(k.body, k, d);
  return d;
}

TpuProgram expand_tpu(const Kernel& k, const ParamValues& params, std::vector<Diagnostic>& diags) {
  return Expander(k, diags).run(params);
}

std::vector<Diagnostic> verify_tpu(const Kernel& k, const ParamValues& params) {
  std::vector<Diagnostic> diags;
  if (!k.tpu) {
    diags.push_back(
        {SourcePos{k.file, k.loc.line, k.loc.col}, "kernel '" + k.name + "' is a GPU kernel, expected a tpu_kernel"});
    return diags;
  }
  expand_tpu(k, params, diags);
  return diags;
}

}  // namespace gtsim::ir
