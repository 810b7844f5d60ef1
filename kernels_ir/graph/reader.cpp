// Workload YAML reader: tensors, params, ops, expansion into primitive nodes (docs/workloads.md).
#include <climits>
#include <cmath>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kernels_ir/graph/workload.hpp"
#include "sim/config.hpp"

namespace gtsim::wl {

class WorkloadReader {
 public:
  WorkloadReader(Workload& w, const std::map<std::string, int64_t>& overrides) : w_(w), overrides_(overrides) {}

  void read(const ConfigNode& root) {
    w_.name_ = root.param<std::string>("name").or_default("workload");
    if (const ConfigNode* p = root.find("params")) {
      if (!p->is_map()) p->fail("params: expected a map of name: integer");
      for (const auto& k : p->keys()) {
        p->at(k).mark_used_recursively();
        params_[k] = overrides_.count(k) ? overrides_.at(k) : eval_int(p->at(k));
      }
    }
    // An override must name a parameter of the file, as `--param` must for a kernel (cli load_program).
    for (const auto& [k, v] : overrides_) {
      if (params_.count(k)) continue;
      std::string list;
      for (const auto& [name, _] : params_) list += (list.empty() ? "" : ", ") + name;
      const ConfigNode* p = root.find("params");
      throw InputError(p ? p->pos() : root.pos(), "workload " + w_.name_ + " has no parameter \"" + k +
                                                      "\"; its parameters are: " + (list.empty() ? "(none)" : list));
    }
    const ConfigNode& tensors = root.at("tensors");
    if (!tensors.is_map()) tensors.fail("tensors: expected a map of name: {dtype, shape}");
    for (const auto& name : tensors.keys()) read_tensor(name, tensors.at(name));
    const ConfigNode& ops = root.at("ops");
    if (!ops.is_seq()) ops.fail("ops: expected a list of ops");
    for (size_t i = 0; i < ops.size(); ++i) read_op(ops[i]);
    std::set<std::string> consumed;
    for (const auto& op : w_.ops_)
      for (const auto& t : op->inputs) consumed.insert(t.name);
    if (const ConfigNode* outs = root.find("outputs")) {
      for (size_t i = 0; i < outs->size(); ++i) {
        std::string n = (*outs)[i].as<std::string>();
        TensorDesc* t = find(n);
        if (!t) (*outs)[i].fail("outputs: unknown tensor '" + n + "'");
        t->is_output = true;
      }
    } else {
      for (const auto& op : w_.ops_)
        for (const auto& t : op->outputs)
          if (!consumed.count(t.name)) find(t.name)->is_output = true;
    }
    root.require_all_used();
    w_.rebuild();
  }

 private:
  // Tensors and op names are indexed so that reading is linear in the number of ops (an expression
  // expands to one op per operator).
  TensorDesc* find(const std::string& n) {
    auto it = tindex_.find(n);
    return it == tindex_.end() ? nullptr : &w_.tensors_[it->second];
  }
  TensorDesc& add(TensorDesc t) {
    tindex_[t.name] = w_.tensors_.size();
    w_.tensors_.push_back(std::move(t));
    return w_.tensors_.back();
  }
  const TensorDesc& need(const ConfigNode& op, const std::string& key) {
    std::string n = op.param<std::string>(key).get();
    TensorDesc* t = find(n);
    if (!t) op.at(key).fail(key + ": unknown tensor '" + n + "' (declare it under tensors: or produce it first)");
    return *t;
  }
  // Output tensor: declared (shape checked by the caller) or created with the given shape.
  // A declared output must have the dtype the op writes: a dtype change is a conversion, which an op
  // does only when asked (`dtype:` on elementwise and softmax, or a `cast` op).
  TensorDesc& out(const ConfigNode& node, const std::string& name, DType dt, std::vector<int64_t> shape) {
    check_size(TensorDesc{name, dt, shape, false, {}}, node);
    if (TensorDesc* t = find(name)) {
      if (t->elements() != TensorDesc{name, dt, shape, false, {}}.elements())
        node.fail("tensor '" + name + "' has " + std::to_string(t->elements()) + " elements, the op produces " +
                  std::to_string(TensorDesc{name, dt, shape, false, {}}.elements()));
      if (t->dtype != dt)
        node.fail("tensor '" + name + "' is declared " + std::string(ir::dtype_name(t->dtype)) + ", the op writes " +
                  std::string(ir::dtype_name(dt)) + "; expected the same dtype (convert with a cast op, or dtype: " +
                  std::string(ir::dtype_name(t->dtype)) + " on an elementwise or softmax op)");
      return *t;
    }
    return add(TensorDesc{name, dt, std::move(shape), false, node.pos()});
  }

  // A shape or param expression, evaluated in checked 64-bit integer arithmetic: numbers must be
  // integers (exact up to 2^53; larger values are written as 2^N or products), `/` rounds down, and
  // an overflow or a division by zero is an error at the expression, never a wrap.
  int64_t eval_int(const ConfigNode& n) {
    std::string s = n.as<std::string>();
    std::vector<std::string> names;
    EwExpr e = parse_ew_expression(s, names, n.pos());
    std::vector<int64_t> vals;
    for (const auto& nm : names) {
      auto it = params_.find(nm);
      if (it == params_.end()) n.fail("unknown parameter '" + nm + "' (declare it under params:)");
      vals.push_back(it->second);
    }
    auto overflow = [&](int64_t a, const char* op, int64_t b) -> int64_t {
      n.fail("'" + s + "': " + std::to_string(a) + " " + op + " " + std::to_string(b) +
             " overflows a 64-bit integer, expected a value up to 9223372036854775807");
    };
    std::function<int64_t(const EwExpr&)> ev = [&](const EwExpr& x) -> int64_t {
      int64_t a = 0, b = 0, r = 0;
      if (x.args.size() >= 1) a = ev(x.args[0]);
      if (x.args.size() >= 2) b = ev(x.args[1]);
      switch (x.op) {
        case EwOp::kConst:
          if (!(std::floor(x.value) == x.value && std::fabs(x.value) <= 9007199254740992.0))
            n.fail("'" + s + "': number " + std::to_string(x.value) +
                   " is not an integer up to 2^53, expected an integer (write large sizes as 2^N or products)");
          return int64_t(x.value);
        case EwOp::kInput:
          return vals[size_t(x.input)];
        case EwOp::kAdd:
          return __builtin_add_overflow(a, b, &r) ? overflow(a, "+", b) : r;
        case EwOp::kSub:
          return __builtin_sub_overflow(a, b, &r) ? overflow(a, "-", b) : r;
        case EwOp::kMul:
          return __builtin_mul_overflow(a, b, &r) ? overflow(a, "*", b) : r;
        case EwOp::kNeg:
          return a == INT64_MIN ? overflow(0, "-", a) : -a;
        case EwOp::kDiv:
          if (b == 0) n.fail("'" + s + "': division by zero, expected a nonzero divisor");
          if (a == INT64_MIN && b == -1) return overflow(a, "/", b);
          return a / b - int64_t((a % b != 0) && ((a < 0) != (b < 0)));  // floor
        case EwOp::kPow: {
          if (b < 0) n.fail("'" + s + "': negative exponent " + std::to_string(b) + ", expected an integer power >= 0");
          if (a == -1) return b % 2 ? -1 : 1;
          r = 1;
          for (int64_t k = 0; k < b && r != 0 && !(r == 1 && a == 1); ++k)  // |a| >= 2 overflows by k = 64
            if (__builtin_mul_overflow(r, a, &r)) return overflow(a, "^", b);
          return r;
        }
        default:
          n.fail("shape expressions allow + - * / ^ and params only");
      }
    };
    int64_t v = ev(e);
    if (v < 1) n.fail("shape dimension must be a positive integer, got " + std::to_string(v));
    return v;
  }

  // Element count and bytes of a tensor fit with room to spare (the IR's buffers hold at most 2^48
  // bytes, exec/compile.cpp), so every later product of sizes is exact; refused at `at`.
  static constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 48;
  static void check_size(const TensorDesc& t, const ConfigNode& at) {
    uint64_t n = 1;
    bool big = false;
    std::string shape;
    for (int64_t d : t.shape) {
      big = big || d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n);
      shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    }
    if (big || n > kMaxTensorBytes / uint64_t(ir::dtype_bytes(t.dtype)))
      at.fail("tensor '" + t.name + "' of shape [" + shape +
              "] is larger than 2^48 bytes (256 TiB), expected a smaller shape");
  }

  void read_tensor(const std::string& name, const ConfigNode& n) {
    TensorDesc t;
    t.name = name;
    t.pos = n.pos();
    std::string dt = n.param<std::string>("dtype").get();
    auto d = parse_wl_dtype(dt);
    if (!d) n.at("dtype").fail("unknown dtype '" + dt + "' (f32, bf16, f16, fp8/e4m3, e5m2, tf32)");
    t.dtype = *d;
    const ConfigNode& shape = n.at("shape");
    if (!shape.is_seq() || shape.size() == 0) shape.fail("shape: expected a non-empty list of dimensions");
    for (size_t i = 0; i < shape.size(); ++i) t.shape.push_back(eval_int(shape[i]));
    check_size(t, shape);
    if (find(name)) n.fail("duplicate tensor name '" + name + "'");
    add(std::move(t));
  }

  Op& new_op(const ConfigNode& n, const std::string& name, OpKind kind) {
    if (!op_names_.insert(name).second) n.fail("duplicate op name '" + name + "'");
    auto op = std::make_unique<Op>();
    op->name = name;
    op->kind = kind;
    op->pos = n.pos();
    w_.ops_.push_back(std::move(op));
    return *w_.ops_.back();
  }

  void read_op(const ConfigNode& n) {
    std::string kind = n.param<std::string>("op").get();
    std::string name = n.param<std::string>("name").or_default(kind + std::to_string(w_.ops_.size()));
    if (kind == "matmul") return read_matmul(n, name);
    if (kind == "elementwise") return read_elementwise(n, name);
    if (kind == "softmax" || kind == "reduction") return read_rowwise(n, name, kind == "softmax");
    if (kind == "attention") return read_attention(n, name);
    if (kind == "activation") return read_activation(n, name);
    if (kind == "cast") return read_cast(n, name);
    n.at("op").fail("unknown op '" + kind + "' (matmul, elementwise, reduction, softmax, attention, activation, cast)");
  }

  // The dtype named by the op's `key` (`dtype:`), or `dflt` when the op has none.
  static DType dtype_key(const ConfigNode& n, const std::string& key, DType dflt) {
    auto s = n.param<std::string>(key).optional();
    if (!s) return dflt;
    auto d = parse_wl_dtype(*s);
    if (!d) n.at(key).fail("unknown dtype '" + *s + "' (f32, bf16, f16, fp8/e4m3, e5m2, tf32)");
    return *d;
  }

  // cast: PyTorch's x.to(dtype), one elementwise node that reads `input` in its dtype and writes `out`
  // in `dtype` (a conversion per element, no arithmetic). The fusion pass may merge it with its
  // elementwise neighbours, as a compiler would; `--no-fusion` keeps it a kernel of its own (eager).
  void read_cast(const ConfigNode& n, const std::string& name) {
    const TensorDesc x = need(n, "input");
    if (!n.find("dtype")) n.fail("cast '" + name + "': missing key 'dtype' (the dtype to convert to, e.g. f32)");
    const DType to = dtype_key(n, "dtype", x.dtype);
    if (to == x.dtype)
      n.at("dtype").fail("cast '" + name + "': '" + x.name + "' is already " + std::string(ir::dtype_name(to)) +
                         ", expected another dtype (a cast to its own dtype runs no kernel)");
    Op& op = new_op(n, name, OpKind::kElementwise);
    op.dtype = x.dtype;
    op.inputs = {x};
    EwExpr id;
    id.op = EwOp::kInput;
    id.input = 0;
    op.exprs = {id};
    op.outputs = {out(n, n.param<std::string>("out").get(), to, x.shape)};
  }

  void read_matmul(const ConfigNode& n, const std::string& name) {
    const TensorDesc a = need(n, "a"), b = need(n, "b");
    bool ta = n.param<bool>("trans_a").or_default(false), tb = n.param<bool>("trans_b").or_default(false);
    if (a.shape.size() < 2 || b.shape.size() < 2) n.fail("matmul operands need at least 2 dimensions");
    int64_t M = a.shape[a.shape.size() - (ta ? 1 : 2)], Ka = a.shape[a.shape.size() - (ta ? 2 : 1)];
    int64_t Kb = b.shape[b.shape.size() - (tb ? 1 : 2)], N = b.shape[b.shape.size() - (tb ? 2 : 1)];
    if (Ka != Kb)
      n.fail("matmul '" + name + "': K of a (" + std::to_string(Ka) + ") != K of b (" + std::to_string(Kb) + ")");
    std::vector<int64_t> oshape(a.shape.begin(), a.shape.end() - 2);
    int64_t batch = 1;
    for (int64_t d : oshape) batch *= d;
    if (b.shape.size() > 2 && b.elements() / uint64_t(Kb * N) != uint64_t(batch))
      n.fail("matmul '" + name + "': batch dimensions of a and b differ");
    oshape.push_back(M);
    oshape.push_back(N);
    unsigned __int128 flops = (unsigned __int128)2 * uint64_t(batch) * uint64_t(M);
    flops *= uint64_t(N);
    if (flops > UINT64_MAX / uint64_t(Ka))
      n.fail("matmul '" + name + "' does more than 2^64 flops (2 x " + std::to_string(batch) + " x " +
             std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(Ka) + "), expected smaller shapes");
    Op& op = new_op(n, name, OpKind::kMatmul);
    op.dtype = a.dtype;
    op.mm = {batch, M, N, Ka, ta, tb};
    op.inputs = {a, b};
    op.outputs = {out(n, n.param<std::string>("out").get(), a.dtype, oshape)};
  }

  // One node per operator of the expression tree; the root writes `out`.
  void read_elementwise(const ConfigNode& n, const std::string& name) {
    std::vector<std::string> names;
    EwExpr tree = parse_ew_expression(n.param<std::string>("expr").get(), names, n.at("expr").pos());
    if (names.empty()) n.at("expr").fail("the expression reads no tensor");
    std::vector<TensorDesc> ins;
    for (const auto& nm : names) {
      TensorDesc* t = find(nm);
      if (!t) n.at("expr").fail("unknown tensor '" + nm + "' in the expression");
      if (!ins.empty() && t->elements() != ins[0].elements())
        n.at("expr").fail("tensor '" + nm + "' has a different element count (no broadcasting)");
      ins.push_back(*t);
    }
    std::string outname = n.param<std::string>("out").get();
    // The computation's dtype is the widest input's (PyTorch's promotion: bf16 + f32 is f32); the
    // result is written in it, or in the op's `dtype:` (one conversion per element at the store).
    DType compute = ins[0].dtype;
    for (const auto& t : ins)
      if (ir::dtype_bytes(t.dtype) > ir::dtype_bytes(compute)) compute = t.dtype;
    const DType result = dtype_key(n, "dtype", compute);
    int counter = 0;
    std::function<TensorDesc(const EwExpr&, bool)> emit = [&](const EwExpr& e, bool root) -> TensorDesc {
      if (e.op == EwOp::kInput) return ins[e.input];
      Op& op = new_op(n, name + (root ? "" : "." + std::string(ew_op_name(e.op)) + std::to_string(counter)),
                      OpKind::kElementwise);
      Op* opp = &op;
      std::string tname = root ? outname : name + ".t" + std::to_string(counter);
      ++counter;
      EwExpr local;
      local.op = e.op;
      local.value = e.value;
      std::vector<TensorDesc> my_in;
      for (const auto& a : e.args) {
        if (a.op == EwOp::kConst) {
          local.args.push_back(a);
          continue;
        }
        TensorDesc t = emit(a, false);
        int idx = -1;
        for (size_t k = 0; k < my_in.size(); ++k)
          if (my_in[k].name == t.name) idx = int(k);
        if (idx < 0) {
          my_in.push_back(t);
          idx = int(my_in.size() - 1);
        }
        EwExpr leaf;
        leaf.input = idx;
        local.args.push_back(leaf);
      }
      opp->dtype = compute;
      opp->inputs = my_in;
      opp->exprs = {local};
      opp->outputs = {out(n, tname, root ? result : compute, ins[0].shape)};
      return opp->outputs[0];
    };
    if (tree.op == EwOp::kInput || tree.op == EwOp::kConst) n.at("expr").fail("the expression computes nothing");
    emit(tree, true);
  }

  void read_rowwise(const ConfigNode& n, const std::string& name, bool softmax) {
    const TensorDesc x = need(n, "input");
    Op& op = new_op(n, name, softmax ? OpKind::kSoftmax : OpKind::kReduction);
    op.dtype = x.dtype;
    op.cols = x.shape.back();
    op.rows = int64_t(x.elements() / uint64_t(op.cols));
    op.inputs = {x};
    std::vector<int64_t> oshape = x.shape;
    if (!softmax) {
      std::string fn = n.param<std::string>("fn").or_default("sum");
      if (fn == "sum")
        op.reduce = ReduceFn::kSum;
      else if (fn == "max")
        op.reduce = ReduceFn::kMax;
      else if (fn == "mean")
        op.reduce = ReduceFn::kMean;
      else
        n.at("fn").fail("unknown reduction '" + fn + "' (sum, max, mean)");
      oshape.back() = 1;
    }
    // softmax(x, dim, dtype=torch.float32): the row is read in its dtype and written in `dtype:`
    op.outputs = {
        out(n, n.param<std::string>("out").get(), softmax ? dtype_key(n, "dtype", x.dtype) : x.dtype, oshape)};
  }

  void read_attention(const ConfigNode& n, const std::string& name) {
    const TensorDesc q = need(n, "q"), k = need(n, "k"), v = need(n, "v");
    if (q.shape.size() != 4) n.at("q").fail("attention q must be [B, H, T, d]");
    if (k.shape != q.shape || v.shape != q.shape) n.fail("attention q, k, v must have the same shape [B, H, T, d]");
    AttentionShape a;
    a.B = q.shape[0], a.H = q.shape[1], a.T = q.shape[2], a.d = q.shape[3];
    a.causal = n.param<bool>("causal").or_default(false);
    std::string impl = n.param<std::string>("impl").or_default("flash");
    if (impl != "naive" && impl != "flash") n.at("impl").fail("impl: expected naive or flash, got '" + impl + "'");
    a.impl = impl == "naive" ? AttnImpl::kNaive : AttnImpl::kFlash;
    std::string oname = n.param<std::string>("out").get();
    // flops (Op::flops) in double: at most 12 T^2 d per head; refuse what a uint64_t cannot hold
    if (12.0 * double(a.T) * double(a.T) * double(a.d) * double(a.B) * double(a.H) +
            6.0 * double(a.T) * double(a.T) * double(a.B) * double(a.H) >
        1.8e19)
      n.fail("attention '" + name + "' does more than 2^64 flops, expected smaller shapes");
    if (a.impl == AttnImpl::kNaive) {
      std::vector<int64_t> sshape = {a.B, a.H, a.T, a.T};
      Op& s = new_op(n, name + ".qk", OpKind::kMatmul);
      s.dtype = q.dtype;
      s.mm = {a.B * a.H, a.T, a.T, a.d, false, true};
      s.inputs = {q, k};
      s.outputs = {out(n, name + ".S", q.dtype, sshape)};
      Op& p = new_op(n, name + ".softmax", OpKind::kSoftmax);
      p.dtype = q.dtype;
      p.rows = a.B * a.H * a.T;
      p.cols = a.T;
      p.inputs = {*find(name + ".S")};
      p.outputs = {out(n, name + ".P", q.dtype, sshape)};
      Op& o = new_op(n, name + ".pv", OpKind::kMatmul);
      o.dtype = q.dtype;
      o.mm = {a.B * a.H, a.T, a.d, a.T, false, false};
      o.inputs = {*find(name + ".P"), v};
      o.outputs = {out(n, oname, q.dtype, q.shape)};
      if (n.param<bool>("backward").or_default(false)) n.at("backward").fail("backward is implemented for impl: flash");
      return;
    }
    Op& f = new_op(n, name, OpKind::kAttention);
    f.dtype = q.dtype;
    f.attn = a;
    f.inputs = {q, k, v};
    f.outputs = {out(n, oname, q.dtype, q.shape)};
    if (n.param<bool>("backward").or_default(false)) {
      // Flash backward: reads Q, K, V, O, dO and the row statistics, recomputes the score tiles.
      const TensorDesc o = *find(oname);
      TensorDesc dO = out(n, n.param<std::string>("grad_out").or_default(oname + ".grad"), q.dtype, q.shape);
      Op& b = new_op(n, name + ".bwd", OpKind::kAttention);
      b.phase = Phase::kBackward;
      b.dtype = q.dtype;
      b.attn = a;
      b.attn.backward = true;
      b.inputs = {q, k, v, o, dO};
      b.outputs = {out(n, name + ".dq", q.dtype, q.shape), out(n, name + ".dk", q.dtype, q.shape),
                   out(n, name + ".dv", q.dtype, q.shape)};
    }
  }

  // An activation chain y = f(f(...f(x))) (count times) and, with backward: true, its gradient
  // dx = d(sum y)/dx: the backward of each activation in reverse order (docs/workloads.md, P6).
  void read_activation(const ConfigNode& n, const std::string& name) {
    const TensorDesc x = need(n, "input");
    std::string fn = n.param<std::string>("fn").get();
    std::vector<std::string> names = {"s"};
    EwExpr f = parse_ew_expression(fn + "(s)", names, n.at("fn").pos());
    int64_t count = n.param<int64_t>("count").range(1, 64).or_default(1);  // int64: no narrowing of 2^32 + 1
    bool recompute = n.param<bool>("recompute").or_default(false);
    std::string oname = n.param<std::string>("out").get();
    std::vector<TensorDesc> s = {x};
    for (int64_t k = 1; k <= count; ++k) {
      Op& op = new_op(n, name + "." + fn + std::to_string(k), OpKind::kElementwise);
      op.dtype = x.dtype;
      op.recompute = recompute;
      op.inputs = {s.back()};
      op.exprs = {f};
      op.outputs = {out(n, k == count ? oname : name + ".s" + std::to_string(k), x.dtype, x.shape)};
      s.push_back(op.outputs[0]);
    }
    if (!n.param<bool>("backward").or_default(false)) return;
    // f'(z) in terms of the activation's output s: sigmoid s(1-s), tanh 1-s^2, exp s.
    std::string deriv;
    if (fn == "sigmoid")
      deriv = "s * (1 - s)";
    else if (fn == "tanh")
      deriv = "1 - s^2";
    else if (fn == "exp")
      deriv = "s";
    else
      n.at("fn").fail("backward is implemented for sigmoid, tanh and exp");
    std::optional<TensorDesc> g;
    if (auto gi = n.param<std::string>("grad_out").optional()) g = need(n, "grad_out");
    std::string gname = n.param<std::string>("grad_in").get();
    for (int64_t k = count; k >= 1; --k) {
      Op& op = new_op(n, name + ".bwd" + std::to_string(k), OpKind::kElementwise);
      op.phase = Phase::kBackward;
      op.dtype = x.dtype;
      std::string e = g ? "g * (" + deriv + ")" : deriv;
      std::vector<std::string> parse_names = {"s"};
      if (g) parse_names.push_back("g");
      op.exprs = {parse_ew_expression(e, parse_names, n.pos())};
      op.inputs = {s[k]};
      if (g) op.inputs.push_back(*g);
      op.outputs = {out(n, k == 1 ? gname : name + ".g" + std::to_string(k - 1), x.dtype, x.shape)};
      g = op.outputs[0];
    }
  }

  Workload& w_;
  std::map<std::string, int64_t> overrides_, params_;
  std::unordered_map<std::string, size_t> tindex_;
  std::unordered_set<std::string> op_names_;
};

std::map<std::string, int64_t> parse_param_overrides(const std::vector<std::string>& entries) {
  std::map<std::string, int64_t> m;
  for (const auto& e : entries) {
    auto bad = [&] {
      throw InputError(SourcePos{"--param", 0, 0},
                       "'" + e + "': expected NAME=VALUE with VALUE an integer or BASE^EXP (n=2^26)");
    };
    auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0) bad();
    std::string v = e.substr(eq + 1);
    auto num = [&](const std::string& t) {
      size_t used = 0;
      int64_t x = 0;
      try {
        x = std::stoll(t, &used);
      } catch (...) {
        bad();
      }
      if (used != t.size()) bad();
      return x;
    };
    auto caret = v.find('^');
    int64_t x = 1;
    if (caret == std::string::npos) {
      x = num(v);
    } else {
      int64_t b = num(v.substr(0, caret)), p = num(v.substr(caret + 1));
      if (p < 0 || p > 62) bad();
      for (int64_t i = 0; i < p; ++i)
        if (__builtin_mul_overflow(x, b, &x))
          throw InputError(SourcePos{"--param", 0, 0},
                           "'" + e + "': " + v + " overflows a 64-bit integer, expected at most 2^63 - 1");
    }
    m[e.substr(0, eq)] = x;
  }
  return m;
}

Workload Workload::load_file(const std::string& path, const std::map<std::string, int64_t>& params) {
  auto root = ConfigNode::load_file(path);
  Workload w;
  WorkloadReader(w, params).read(*root);
  return w;
}

Workload Workload::load_string(const std::string& yaml, const std::string& name,
                               const std::map<std::string, int64_t>& params) {
  auto root = ConfigNode::load_string(yaml, name);
  Workload w;
  WorkloadReader(w, params).read(*root);
  return w;
}

}  // namespace gtsim::wl
