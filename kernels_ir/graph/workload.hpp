// A workload: named tensors and ops read from YAML (format: docs/workloads.md), held as a
// Boost.Graph DAG (an edge per tensor from its producer to each consumer). Passes (passes.hpp)
// rewrite it; lowering (lower_gpu.hpp) turns each op into a kernel of the IR; the TPU target
// consumes the same plain view: ops_in_order(), each Op with its kind, shapes, dtype bytes,
// flops() and min_bytes().
//
// Expansion at load time (so every target sees the same primitive ops):
//  - `elementwise` with an expression: one node per operator of the expression tree
//    (sin(x)^2 + cos(x)^2 is 5 nodes: sin, cos, pow, pow, add) until the fusion pass merges them;
//  - `activation` chains (sigmoid x3, optional backward): one forward node per activation and,
//    with backward: true, one backward node per activation (phase kBackward);
//  - `attention` with impl: naive: batched matmul S = QK^T, softmax P = softmax(S), matmul O = PV,
//    with S and P (T x T per head) as tensors in HBM; impl: flash stays one kAttention node.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels_ir/exec/dyn_inst.hpp"
#include "sim/error.hpp"

namespace gtsim::wl {

using ir::DType;

enum class OpKind : uint8_t { kMatmul, kElementwise, kReduction, kSoftmax, kAttention };
enum class Phase : uint8_t { kForward, kBackward };
enum class AttnImpl : uint8_t { kNaive, kFlash };
enum class ReduceFn : uint8_t { kSum, kMax, kMean };

std::string_view op_kind_name(OpKind k);
// "f32"/"fp32", "bf16", "f16"/"fp16", "fp8"/"e4m3", "e5m2", "tf32"; nullopt otherwise.
std::optional<DType> parse_wl_dtype(std::string_view s);

struct TensorDesc {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  bool is_output = false;  // a workload output: always written to memory, never recomputed
  SourcePos pos;
  uint64_t elements() const;
  uint64_t bytes() const { return elements() * uint64_t(ir::dtype_bytes(dtype)); }
};

// Elementwise expression tree over the op's inputs (EwExpr::input indexes Op::inputs).
enum class EwOp : uint8_t {
  kInput,
  kConst,
  kNeg,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kSin,
  kCos,
  kExp,
  kLog,
  kTanh,
  kSigmoid,
  kRelu,
  kGelu,
  kSqrt,
  kRsqrt,
};
struct EwExpr {
  EwOp op = EwOp::kInput;
  int input = -1;    // kInput
  double value = 0;  // kConst
  std::vector<EwExpr> args;
  // Per element: SFU (MUFU) operations and fp32 ALU operations this tree lowers to.
  int sfu_ops() const;
  int alu_ops() const;
  int flops() const { return sfu_ops() + alu_ops(); }  // one flop per operator node (pow by 2 = 1 mul)
  std::string str(const std::vector<std::string>& names) const;
};
std::string_view ew_op_name(EwOp op);

struct MatmulShape {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  bool trans_a = false, trans_b = false;  // A is [K,M] / B is [N,K] in memory (row-major)
};

struct AttentionShape {
  int64_t B = 1, H = 1, T = 0, d = 0;
  bool causal = false;
  AttnImpl impl = AttnImpl::kFlash;
  bool backward = false;  // flash backward recomputes the score tiles instead of reading P
};

struct Op {
  std::string name;
  OpKind kind = OpKind::kElementwise;
  Phase phase = Phase::kForward;
  SourcePos pos;
  std::vector<TensorDesc> inputs, outputs;  // copies of the tensor table's entries
  DType dtype = DType::kF32;                // element type of the computation (inputs' dtype)
  MatmulShape mm;                           // kMatmul
  std::vector<EwExpr> exprs;                // kElementwise: one tree per output, over inputs
  int64_t rows = 0, cols = 0;               // kSoftmax, kReduction (over the last axis, cols)
  ReduceFn reduce = ReduceFn::kSum;         // kReduction
  AttentionShape attn;                      // kAttention
  bool recompute = false;                   // forward activation whose output backward may recompute
  std::vector<std::string> fused_from;      // the original nodes this one replaced (fusion)

  int dtype_bytes() const { return ir::dtype_bytes(dtype); }
  uint64_t elements() const;   // output elements (kElementwise), rows*cols (softmax, reduction)
  uint64_t flops() const;      // useful floating-point operations (matmul 2MNK, ...)
  uint64_t min_bytes() const;  // each input read once + each output written once
  double intensity() const { return min_bytes() ? double(flops()) / double(min_bytes()) : 0.0; }
};

class Workload {
 public:
  // Reads and checks a workload; InputError with file:line:col on bad input, unknown keys,
  // unknown tensors, shape mismatches or a dependency cycle.
  // `params` override the file's `params:` entries (integers used in shapes), e.g. {"T", 8192}.
  static Workload load_file(const std::string& path, const std::map<std::string, int64_t>& params = {});
  static Workload load_string(const std::string& yaml, const std::string& name = "<string>",
                              const std::map<std::string, int64_t>& params = {});

  Workload();
  ~Workload();
  Workload(Workload&&) noexcept;
  Workload& operator=(Workload&&) noexcept;
  Workload(const Workload&);  // deep copy (passes work on a copy)
  Workload& operator=(const Workload&);

  const std::string& name() const { return name_; }
  // Topological order (ties by declaration order): producers before consumers.
  std::vector<const Op*> ops_in_order() const;
  size_t op_count() const { return ops_.size(); }
  const TensorDesc* tensor(const std::string& name) const;
  const std::vector<TensorDesc>& tensors() const { return tensors_; }
  // True when `t` is an external input (no op produces it).
  bool is_input(const std::string& t) const;

  // ---- mutation (used by passes; each call re-checks the DAG) ----
  std::vector<std::unique_ptr<Op>>& mutable_ops() { return ops_; }
  TensorDesc& add_tensor(TensorDesc t);  // replaces a same-named tensor
  void remove_unused_tensors();
  // Rebuilds the Boost.Graph DAG from the ops' tensor names and checks it: every input either
  // produced by exactly one op or declared; no cycle (InputError at the op closing it).
  void rebuild();

  // Summary over ops (sum of flops and min_bytes) and as JSON.
  uint64_t total_flops() const;
  uint64_t total_min_bytes() const;
  std::string describe() const;  // one line per op: name kind shape flops bytes

 private:
  std::string name_;
  std::vector<TensorDesc> tensors_;
  std::vector<std::unique_ptr<Op>> ops_;
  std::vector<size_t> order_;  // topological order (indices into ops_)
  friend class WorkloadReader;
};

// Parses command-line param overrides "NAME=VALUE" (VALUE an integer or BASE^EXP, e.g. n=2^26)
// for Workload::load_file (InputError on a malformed entry).
std::map<std::string, int64_t> parse_param_overrides(const std::vector<std::string>& entries);

// The most nodes (operators, names, numbers) one workload expression may have; a fused expression
// (passes.cpp) is kept within it too. Nesting is limited by ir::kMaxNesting (kernels_ir/parser.hpp).
inline constexpr int kMaxExprNodes = 4096;

// Parses an elementwise expression (`sin(x)^2 + cos(x)^2`, `x * sigmoid(y)`, `-a / 2`) over
// `names`; names not in the list are added to it. Errors point at `pos` + the column.
EwExpr parse_ew_expression(const std::string& text, std::vector<std::string>& names, const SourcePos& pos);

}  // namespace gtsim::wl
