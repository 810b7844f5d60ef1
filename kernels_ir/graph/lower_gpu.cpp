// Generated elementwise, softmax and reduction kernels (the IR syntax: docs/ir.md).
#include "kernels_ir/graph/lower_gpu.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "kernels_ir/parser.hpp"

namespace gtsim::wl {

namespace {

std::string ident(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return o;
}

std::string kir_dtype(DType t) { return std::string(ir::dtype_name(t)); }

// Elements per thread per access: 16 bytes of the widest tensor the kernel touches (a bf16 -> f32 cast
// loads 8 bytes and stores 16 per thread, as PyTorch's vectorized kernels do).
int vec_elems(const std::vector<TensorDesc>& a, const std::vector<TensorDesc>& b = {}) {
  int widest = 1;
  for (const auto* ts : {&a, &b})
    for (const auto& t : *ts) widest = std::max(widest, ir::dtype_bytes(t.dtype));
  return 16 / widest;
}

// Emits the instructions of one expression tree for vector element `e`; returns its register. The
// arithmetic is f32: an input stored in another dtype converts per element (`convert`, by input).
class TreeEmitter {
 public:
  TreeEmitter(std::ostringstream& o, int e, std::vector<bool> convert) : o_(o), e_(e), convert_(std::move(convert)) {}
  // The result stored as `dt`: f32 as it is; another dtype converts, two elements per instruction
  // (F2FP packs a pair), so every second element of the vector issues one cvt.
  std::string store_value(const std::string& r, DType dt) {
    if (dt == DType::kF32 || e_ % 2 == 0) return r;
    return op("cvt", {r});
  }
  std::string emit(const EwExpr& x) {
    std::ostringstream key;
    key_of(x, key);
    auto it = cse_.find(key.str());
    if (it != cse_.end()) return it->second;
    std::string r = gen(x);
    cse_[key.str()] = r;
    return r;
  }

 private:
  static void key_of(const EwExpr& x, std::ostringstream& k) {
    k << int(x.op) << ':' << x.input << ':' << x.value << '(';
    for (const auto& a : x.args) key_of(a, k), k << ',';
    k << ')';
  }
  std::string fresh() { return "t" + std::to_string(n_++) + "_" + std::to_string(e_); }
  std::string op(const std::string& mn, const std::vector<std::string>& src) {
    std::string d = fresh();
    o_ << "    " << d << " = " << mn;
    for (size_t i = 0; i < src.size(); ++i) o_ << (i ? ", " : " ") << src[i];
    o_ << "\n";
    return d;
  }
  std::string gen(const EwExpr& x) {
    if (x.op == EwOp::kInput) {
      std::string r = "in" + std::to_string(x.input);
      return convert_[size_t(x.input)] ? op("cvt", {r}) : r;  // bf16/fp8 -> f32 per element
    }
    if (x.op == EwOp::kConst) return "cst";
    std::vector<std::string> a;
    for (const auto& y : x.args) a.push_back(emit(y));
    switch (x.op) {
      case EwOp::kNeg:
        return op("fsub", {"cst", a[0]});
      case EwOp::kAdd:
        return op("fadd", a);
      case EwOp::kSub:
        return op("fsub", a);
      case EwOp::kMul:
        return op("fmul", a);
      case EwOp::kDiv:
        return op("fmul", {a[0], op("rcp", {a[1]})});
      case EwOp::kPow: {
        int n = x.args[1].op == EwOp::kConst && x.args[1].value >= 1 && x.args[1].value <= 8 &&
                        double(int(x.args[1].value)) == x.args[1].value
                    ? int(x.args[1].value)
                    : 0;
        if (n == 0) return op("ex2", {op("fmul", {op("lg2", {a[0]}), a[1]})});
        std::string r = a[0];
        for (int i = 1; i < n; ++i) r = op("fmul", {r, a[0]});
        return r;
      }
      case EwOp::kSin:
        return op("sin", {op("fmul", {a[0], "cst"})});
      case EwOp::kCos:
        return op("cos", {op("fmul", {a[0], "cst"})});
      case EwOp::kExp:
        return op("ex2", {op("fmul", {a[0], "cst"})});
      case EwOp::kLog:
        return op("fmul", {op("lg2", {a[0]}), "cst"});
      case EwOp::kSqrt:
        return op("sqrt", {a[0]});
      case EwOp::kRsqrt:
        return op("rsqrt", {a[0]});
      case EwOp::kRelu:
        return op("fmax", {a[0], "cst"});
      case EwOp::kSigmoid:
        return op("rcp", {op("fadd", {op("ex2", {op("fmul", {a[0], "cst"})}), "cst"})});
      case EwOp::kTanh: {
        std::string r = op("rcp", {op("fadd", {op("ex2", {op("fmul", {a[0], "cst"})}), "cst"})});
        return op("ffma", {r, "cst", "cst"});
      }
      case EwOp::kGelu: {
        std::string c = op("fmul", {op("fmul", {a[0], a[0]}), a[0]});
        std::string u = op("ffma", {c, "cst", a[0]});
        std::string s = op("rcp", {op("fadd", {op("ex2", {op("fmul", {u, "cst"})}), "cst"})});
        return op("fmul", {a[0], s});
      }
      default:
        return op("fadd", a);
    }
  }
  std::ostringstream& o_;
  int e_;
  std::vector<bool> convert_;
  int n_ = 0;
  std::map<std::string, std::string> cse_;
};

void header(std::ostringstream& o, const std::string& name, const std::string& params) {
  o << "kernel " << name << "(" << params << ") {\n  grid CTAS\n  block 256\n  regs 32\n";
}

LoweredKernel finish(const Op& op, const std::string& name, std::ostringstream& o, ir::ParamValues params) {
  LoweredKernel k;
  k.name = name;
  k.op = op.name;
  k.kir = o.str();
  k.kernel = std::shared_ptr<ir::Kernel>(ir::parse_kernel_string(k.kir, "<generated " + name + ">").release());
  k.params = std::move(params);
  return k;
}

}  // namespace

LoweredKernel lower_elementwise(const Op& op, const LowerOptions& opt) {
  const int V = vec_elems(op.inputs, op.outputs);
  std::vector<bool> convert;
  for (const auto& t : op.inputs) convert.push_back(t.dtype != DType::kF32);
  std::string name = (opt.touch_only ? "touch_" : "ew_") + ident(op.name);
  std::ostringstream o;
  header(o, name, "N, CTAS, ITERS, IT0 = 0");
  for (size_t i = 0; i < op.inputs.size(); ++i)
    o << "  buffer x" << i << " : " << kir_dtype(op.inputs[i].dtype) << "[N]\n";
  for (size_t i = 0; i < op.outputs.size(); ++i)
    o << "  buffer y" << i << " : " << kir_dtype(op.outputs[i].dtype) << "[N]\n";
  o << "  loop it in IT0 .. IT0 + ITERS {\n"
    << "    let idx = (it * CTAS * 256 + ctaid.x * 256 + tid.x) * " << V << "\n";
  for (size_t i = 0; i < op.inputs.size(); ++i)
    o << "    @(idx < N) in" << i << " = ld.global.v" << V << " x" << i << "[idx]\n";
  // One copy of the computation per vector element (the registers of element e end in _e).
  std::vector<std::string> results(op.outputs.size(), op.inputs.empty() ? "cst" : "in0");
  for (int e = 0; e < V && !opt.touch_only; ++e) {
    TreeEmitter em(o, e, convert);
    for (size_t i = 0; i < op.exprs.size(); ++i) {
      results[i] = em.emit(op.exprs[i]);
      if (i < op.outputs.size()) results[i] = em.store_value(results[i], op.outputs[i].dtype);
    }
  }
  for (size_t i = 0; i < op.outputs.size(); ++i)
    o << "    @(idx < N) st.global.v" << V << " y" << i << "[idx], " << results[i] << "\n";
  o << "  }\n}\n";
  int64_t n = int64_t(op.elements());
  int64_t full = (n + int64_t(opt.ctas) * 256 * V - 1) / (int64_t(opt.ctas) * 256 * V);
  int64_t iters = opt.iteration_limit > 0 ? std::min(full, opt.iteration_limit) : full;
  auto k = finish(op, name, o, {{"N", n}, {"CTAS", opt.ctas}, {"ITERS", iters}});
  k.full_iterations = full, k.iterations = iters;
  const int64_t per_iter = int64_t(opt.ctas) * 256 * V;
  uint64_t elem_bytes = 0;  // one element of every input and output
  for (const auto* ts : {&op.inputs, &op.outputs})
    for (const auto& t : *ts) elem_bytes += uint64_t(ir::dtype_bytes(t.dtype));
  k.bytes_per_iteration = uint64_t(per_iter) * elem_bytes;
  k.work_scale = double(n) / double(std::min(n, iters * per_iter));
  return k;
}

namespace {
// One warp per row; `body` gets the per-chunk instructions. Rows are grid-strided over CTAs of 8 warps.
LoweredKernel rowwise(const Op& op, const LowerOptions& opt, bool softmax) {
  const DType dt = op.inputs[0].dtype, out_dt = op.outputs[0].dtype;
  const int V = vec_elems(op.inputs, op.outputs);
  std::string name = (softmax ? "softmax_" : "reduce_") + ident(op.name);
  std::ostringstream o;
  header(o, name, "ROWS, COLS, CTAS, ITERS, IT0 = 0");
  o << "  buffer x : " << kir_dtype(dt) << "[ROWS * COLS]\n";
  o << "  buffer y : " << kir_dtype(out_dt) << "[ROWS * " << (softmax ? "COLS" : "1") << "]\n";
  o << "  loop it in IT0 .. IT0 + ITERS {\n"
    << "    let row = (it * CTAS + ctaid.x) * 8 + warp\n"
    << "    loop c in 0 .. cdiv(COLS, 32 * " << V << ") {\n"
    << "      let col = (c * 32 + lane) * " << V << "\n"
    << "      @(row < ROWS && col < COLS) v = ld.global.v" << V << " x[row * COLS + col]\n";
  for (int e = 0; e < V; ++e) o << "      m = fmax m, v\n";
  o << "    }\n";
  for (int s = 16; s >= 1; s /= 2) o << "    m = shfl.bfly m, " << s << "\n";
  if (softmax) {
    // The row stays in registers: exp and sum, then scale and store (one read, one write).
    o << "    loop c in 0 .. cdiv(COLS, 32 * " << V << ") {\n";
    for (int e = 0; e < V; ++e)
      o << "      d" << e << " = fsub v, m\n      p" << e << " = ex2 d" << e << "\n      s = fadd s, p" << e << "\n";
    o << "    }\n";
    for (int s = 16; s >= 1; s /= 2) o << "    s = shfl.bfly s, " << s << "\n";
    o << "    r = rcp s\n    loop c in 0 .. cdiv(COLS, 32 * " << V << ") {\n"
      << "      let col = (c * 32 + lane) * " << V << "\n";
    for (int e = 0; e < V; ++e) o << "      q" << e << " = fmul p" << e << ", r\n";
    o << "      @(row < ROWS && col < COLS) st.global.v" << V << " y[row * COLS + col], q0\n    }\n";
  } else {
    o << "    @(lane == 0 && row < ROWS) st.global y[row], m\n";
  }
  o << "  }\n}\n";
  int64_t full = (op.rows + int64_t(opt.ctas) * 8 - 1) / (int64_t(opt.ctas) * 8);
  int64_t iters = opt.iteration_limit > 0 ? std::min(full, opt.iteration_limit) : full;
  auto k = finish(op, name, o, {{"ROWS", op.rows}, {"COLS", op.cols}, {"CTAS", opt.ctas}, {"ITERS", iters}});
  k.full_iterations = full, k.iterations = iters;
  const int64_t rows_per_iter = int64_t(opt.ctas) * 8;
  k.bytes_per_iteration =
      uint64_t(rows_per_iter) * (uint64_t(op.cols) * uint64_t(ir::dtype_bytes(dt)) +
                                 uint64_t(softmax ? op.cols : 1) * uint64_t(ir::dtype_bytes(out_dt)));
  k.work_scale = double(op.rows) / double(std::min(op.rows, iters * rows_per_iter));
  return k;
}
}  // namespace

LoweredKernel lower_softmax(const Op& op, const LowerOptions& opt) { return rowwise(op, opt, true); }
LoweredKernel lower_reduction(const Op& op, const LowerOptions& opt) { return rowwise(op, opt, false); }

int64_t grid_stride_iterations(const LoweredKernel& k) { return k.full_iterations; }

ir::ParamValues LoweredKernel::slice(int64_t first, int64_t count) const {
  ir::ParamValues p = params;
  p["IT0"] = first;
  p["ITERS"] = count;
  return p;
}

}  // namespace gtsim::wl
