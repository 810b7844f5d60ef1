// Internal: the compiled form of a Program (expressions as postfix node lists with pre-resolved
// slots, statements as flat code with jumps, static instructions with DynInst templates).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/ops.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {

inline constexpr uint32_t kNoExpr = 0xffffffffu;

enum class NodeKind : uint8_t {
  kConst,
  kSlot,
  kSlotIdx,  // constant; slot value; slot (base + uniform index popped from the stack)
  kLane,
  kTid,
  kWarp,
  kCtaid,  // builtins (kTid / kCtaid: dimension in `slot`)
  kUnary,
  kBinary,
  kSelect,  // operators (op in `op`)
};

struct Node {
  NodeKind kind = NodeKind::kConst;
  ExprOp op = ExprOp::kNum;
  uint32_t slot = 0, count = 0;  // kSlotIdx: array base and length
  int64_t c = 0;
  int line = 0, col = 0;
};

enum class Uniformity : uint8_t { kConst, kUniform, kVarying };

struct CExpr {
  uint32_t first = 0, count = 0;
  Uniformity u = Uniformity::kConst;
  int64_t value = 0;   // when kConst
  uint32_t depth = 0;  // evaluation stack depth
};

enum class OpK : uint8_t { kInst, kLet, kLoopInit, kLoopTest, kLoopInc, kJump, kIf, kExit };

struct Op {
  OpK k = OpK::kInst;
  bool divergent = false;  // kLoopInit: lane-varying bounds (pushes a SIMT entry)
  uint32_t a = 0, b = 0, c = 0, d = 0;
  // kInst: a = static id.  kLet: a = slot, b = expr.  kLoopInit: a = slot, b = lo, c = exit pc.
  // kLoopTest: a = slot, b = hi, c = exit pc, d = step.  kLoopInc: a = slot, b = step, c = test pc.
  // kIf: a = cond, b = else pc, c = end pc, d = has else.  kJump: a = target.
  uint32_t loop = kNoExpr;  // kLoopInit/Test/Inc: index into Program::Impl::loop_ctl, or none (fully unrolled)
};

// The loop-control instructions of one loop that is not fully unrolled (docs/ir.md "Loop control"):
// per group of `unroll` iterations an iadd (counter) and a setp (predicate) when the group starts and
// a bra when it ends; the remainder iterations (trip % unroll) form one last, shorter group.
inline constexpr int64_t kDefaultUnroll = 4;  // nvcc's default for a loop with a runtime trip count
struct LoopCtl {
  uint32_t unroll = 1;
  uint32_t iadd = 0, setp = 0, bra = 0;  // static instruction ids
  // For sampled simulation (Program::sampling_loop): the loop variable is warp-uniform, the loop is
  // declared `runtime`, its body holds global memory, cp.async, a barrier or an mma (it carries the
  // kernel's steady state), and its nesting depth among loops with loop control.
  bool uniform = false, runtime = false, carries_work = false;
  uint32_t depth = 0;
};

struct RegRef {
  uint16_t base = kNoReg;
  uint16_t count = 1;
  uint32_t idx = kNoExpr;  // register array element index (uniform expression)
};

struct MemRef {
  uint64_t base = 0;       // buffer virtual base / shared array offset
  uint32_t elem = 1;       // element bytes
  uint32_t idx = kNoExpr;  // element index expression
  int buffer = -1;         // global buffer number (for init values)
};

struct CInst {
  Form form = Form::kAlu;
  OpClass op = OpClass::kInt;
  DType dtype = DType::kF32;
  uint8_t access_bytes = 0;
  bool cache_global = true;
  bool int_mad = false;      // imul / imad, or an iexpr whose value is a * b (+ c): IMAD / IMUL
  bool value_needed = true;  // some expression reads a destination register's value (Compiler::mark_values_read)
  uint8_t n_dst = 0, n_src = 0;
  RegRef dst[kMaxDst], src[kMaxSrc];
  uint32_t pred = kNoExpr;
  uint32_t vec = kNoExpr;    // vector width expression (`.v(EXPR)`)
  uint32_t imm = kNoExpr;    // imm expression
  uint32_t value = kNoExpr;  // kIntAlu / kIExpr value; kShfl lane expression
  uint32_t shfl_src = kNoExpr;
  ShflMode shfl = ShflMode::kBfly;
  MemRef m1, m2;  // m1 -> addr (global or shared), m2 -> addr2 (cp.async shared destination)
  uint32_t addr_lanes = kFullMask;
  uint32_t flops_lane = 0;
  MmaKind mma;
  uint32_t box[3] = {kNoExpr, kNoExpr, kNoExpr};  // kTmaLoad: ROWS, COLS (elements), LD (elements)
};

struct BufInit {
  InitKind kind = InitKind::kNone;
  uint64_t base = 0, bytes = 0, stride = 8, seed = 0;
  uint32_t elem = 4;
  mutable std::once_flag once;
  mutable std::vector<uint32_t> next;  // chase: next node of node j
  void build_chase() const;
  int64_t value_at(uint64_t addr) const;
};

struct SlotInfo {
  bool uniform = false;  // statically warp-uniform (loop variable with uniform bounds, uniform let)
};

struct Program::Impl {
  std::string name, file;
  ParamValues params;
  Dim3 grid, block;
  uint32_t shared_bytes = 0, regs = 0;
  std::vector<BufferInfo> buffers;
  std::vector<std::unique_ptr<BufInit>> inits;  // one per buffer
  std::vector<StaticInstInfo> infos;
  std::vector<CInst> insts;
  std::vector<Op> code;
  std::vector<Node> nodes;
  std::vector<CExpr> exprs;
  std::vector<SlotInfo> slots;  // registers first (ids 0..num_regs-1), then lets and loop variables
  uint32_t num_regs = 0;
  uint32_t max_depth = 1;              // deepest expression stack
  bool tensor_cores = false;           // an mma.sync / wgmma outside every branch the parameters rule out
  uint32_t max_nest = 1;               // deepest if/loop nesting (SIMT stack capacity)
  std::vector<LoopCtl> loop_ctl;       // loops with loop control (Op::loop indexes it)
  std::vector<uint32_t> loop_of_inst;  // innermost loop (code index of its kLoopInit) per static inst, or kNoExpr
  uint32_t sample_loop = kNoExpr;      // loop_ctl index of the loop sampling fast-forwards, or none
  bool uses_mbarriers = false;         // an mbarrier wait: skips keep its phase parity (Program::sampling_loop)
  uint64_t mbar_period = 1;            // lcm over waited mbarrier arrays of 2 x their length (stage and parity)
};

uint64_t splitmix64(uint64_t& s);
// Inline: the evaluator applies it per node of every warp-uniform expression.
inline int64_t scalar_op(ExprOp op, int64_t a, int64_t b) {
  auto ua = uint64_t(a), ub = uint64_t(b);
  switch (op) {
    case ExprOp::kNeg:
      return int64_t(0 - ua);
    case ExprOp::kNot:
      return !a;
    case ExprOp::kBitNot:
      return ~a;
    case ExprOp::kAdd:
      return int64_t(ua + ub);
    case ExprOp::kSub:
      return int64_t(ua - ub);
    case ExprOp::kMul:
      return int64_t(ua * ub);
    case ExprOp::kDiv:
      return b == 0 ? 0 : b == -1 ? int64_t(0 - ua) : a / b;
    case ExprOp::kMod:
      return b == 0 || b == -1 ? 0 : a % b;
    case ExprOp::kCdiv:
      return b == 0 ? 0 : b == -1 ? int64_t(0 - ua) : (a / b + ((a % b != 0) && ((a < 0) == (b < 0))));
    case ExprOp::kShl:
      return int64_t(ua << (ub & 63));
    case ExprOp::kShr:
      return a >> (ub & 63);
    case ExprOp::kLt:
      return a < b;
    case ExprOp::kLe:
      return a <= b;
    case ExprOp::kGt:
      return a > b;
    case ExprOp::kGe:
      return a >= b;
    case ExprOp::kEq:
      return a == b;
    case ExprOp::kNe:
      return a != b;
    case ExprOp::kAnd:
      return a & b;
    case ExprOp::kOr:
      return a | b;
    case ExprOp::kXor:
      return a ^ b;
    case ExprOp::kLAnd:
      return a && b;
    case ExprOp::kLOr:
      return a || b;
    case ExprOp::kMin:
      return a < b ? a : b;
    case ExprOp::kMax:
      return a > b ? a : b;
    default:
      return 0;
  }
}

// Compiles `k` bound to `params`; problems go to `diags` (the result is usable only when diags is empty).
std::unique_ptr<Program::Impl> compile_program(const Kernel& k, const ParamValues& params,
                                               std::vector<Diagnostic>& diags,
                                               const BufferPlacement* placement = nullptr);

}  // namespace gtsim::ir
