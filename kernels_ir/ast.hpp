// The parsed kernel: a structured program (header, buffers, statements, instructions).
// Structural equality (operator==) ignores source positions, so parse(print(k)) == k.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::ir {

// A source position inside the kernel file. Compares equal to every other Loc (see header comment).
struct Loc {
  int line = 0, col = 0;
  bool operator==(const Loc&) const { return true; }
};

enum class ExprOp : uint8_t {
  kNum,
  kName,
  kIndex,  // literal; name (param, let, loop var, builtin, register); name[expr] (register array)
  kNeg,
  kNot,
  kBitNot,  // unary - ! ~
  kMul,
  kDiv,
  kMod,
  kAdd,
  kSub,
  kShl,
  kShr,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kXor,
  kOr,
  kLAnd,
  kLOr,
  kMin,
  kMax,
  kCdiv,
  kSelect,  // functions: min(a, b, ...), max(...), cdiv(a, b), select(c, a, b)
};

struct Expr {
  ExprOp op = ExprOp::kNum;
  int64_t num = 0;
  std::string name;        // kName, kIndex
  std::vector<Expr> args;  // operands
  Loc loc;
  bool operator==(const Expr&) const = default;
};

// One instruction: `@(pred) d0, d1 = mnemonic s0, s1, ...`. Operands are expressions: a bare name or
// name[index] is a register, a buffer element or a shared element depending on the position.
struct Instr {
  std::string mnemonic;      // dotted, as written; a `.v(EXPR)` segment is stored as "v()"
  std::optional<Expr> vec;   // the EXPR of `.v(EXPR)`
  std::optional<Expr> pred;  // @(pred)
  std::vector<Expr> dsts, srcs;
  Loc loc;
  bool operator==(const Instr&) const = default;
};

enum class StmtKind : uint8_t { kInstr, kLet, kReg, kLoop, kIf, kExit };

struct Stmt {
  StmtKind kind = StmtKind::kInstr;
  Instr instr;                  // kInstr
  std::string name;             // kLet, kReg (array name), kLoop (variable)
  std::vector<Expr> e;          // kLet: {value}; kReg: {count}; kLoop: {lo, hi, step?}; kIf: {cond}
  std::optional<Expr> unroll;   // kLoop: iterations per loop-control group (docs/ir.md "Loop control")
  std::vector<Stmt> body;       // kLoop, kIf (then)
  std::vector<Stmt> else_body;  // kIf
  bool has_else = false;
  bool is_return = false;     // kExit written as `return`
  bool runtime_trip = false;  // kLoop `runtime`: the trip count is a run-time value (never fully unrolled)
  Loc loc;
  bool operator==(const Stmt&) const = default;
};

struct Param {
  std::string name;
  std::optional<Expr> def;
  Loc loc;
  bool operator==(const Param&) const = default;
};

enum class InitKind : uint8_t { kNone, kZero, kIota, kChase };

struct BufferDecl {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<Expr> shape;
  bool col_major = false, has_layout = false;
  std::optional<Expr> align;
  InitKind init = InitKind::kNone;
  std::vector<Expr> init_args;  // chase(stride_bytes, seed)
  bool vmem = false;            // TPU dialect: `vmem NAME : T[rows, cols] slots N` (else HBM)
  std::optional<Expr> slots;    // vmem: 2 = double-buffered
  Loc loc;
  bool operator==(const BufferDecl&) const = default;
};

struct SharedDecl {
  std::string name;
  DType dtype = DType::kF32;
  Expr count;
  Loc loc;
  bool operator==(const SharedDecl&) const = default;
};

struct Kernel {
  std::string name;
  bool tpu = false;  // `tpu_kernel NAME(...)`: the TPU dialect (kernels_ir/tpu_dialect.hpp)
  std::string file;  // for diagnostics (not compared)
  std::vector<Param> params;
  std::vector<Expr> grid, block;
  std::optional<Expr> regs, smem;
  std::vector<BufferDecl> buffers;
  std::vector<SharedDecl> shared;
  std::vector<Stmt> body;
  Loc loc;
  bool operator==(const Kernel& o) const {
    return name == o.name && tpu == o.tpu && params == o.params && grid == o.grid && block == o.block &&
           regs == o.regs && smem == o.smem && buffers == o.buffers && shared == o.shared && body == o.body;
  }
};

}  // namespace gtsim::ir
