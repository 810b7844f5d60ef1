// The instruction set: decoding a dotted mnemonic ("ld.global.cg.v4", "mma.sync.m16n8k16.bf16.f32")
// into what the verifier, the executor and the printer need.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::ir {

enum class Form : uint8_t {
  kAlu,         // d = op a, b, ...       (float / sfu: no value tracking)
  kIntAlu,      // d = op a, b, ...       (integer: values tracked per lane)
  kIExpr,       // d = iexpr EXPR
  kShfl,        // d = shfl.MODE a, EXPR
  kLoad,        // d = ld.SPACE BUF[i]
  kStore,       // st.SPACE BUF[i], a
  kAtom,        // d = atom.SPACE.OP BUF[i], a
  kRed,         // red.SPACE.OP BUF[i], a
  kLdMatrix,    // d = ldmatrix.xN(.trans) SMEM[i]
  kStMatrix,    // stmatrix.xN(.trans) SMEM[i], a
  kCpAsync,     // cp.async(.ca|.cg).N SMEM[i], BUF[j]
  kCommit,      // cp.async.commit
  kWait,        // cp.async.wait N
  kBar,         // bar.sync (ID)?
  kMbarInit,    // mbarrier.init SMEM[i], COUNT
  kMbarArrive,  // mbarrier.arrive SMEM[i]
  kMbarWait,    // mbarrier.wait SMEM[i], PARITY
  kMma,         // d = mma.sync.mMnNkK.AB.ACC a, b, c  /  wgmma.m64nNk16.AB.ACC
  kTma,         // cp.async.bulk.tensor MBAR[i], BUF[j], ROWS, COLS, LD
};

enum class MemSpace : uint8_t { kNone, kGlobal, kShared };
enum class ShflMode : uint8_t { kBfly, kUp, kDown, kIdx };

struct OpDesc {
  Form form = Form::kAlu;
  OpClass op = OpClass::kInt;
  DType dtype = DType::kF32;
  bool dtype_given = false;      // an explicit .DTYPE suffix on a memory op
  uint32_t flops_per_lane = 0;   // fp ops per active lane (mma: per warp, in mma.flops())
  int min_src = 0, max_src = 0;  // operand counts (excluding memory operands for memory forms)
  bool has_dst = false;          // needs `d =`
  ExprOp int_op = ExprOp::kAdd;  // kIntAlu: how values combine (kNum = mov, kSelect = imad)
  MemSpace space = MemSpace::kNone;
  int vec = 1;               // vector width (elements); 0 = given by `.v(EXPR)`
  bool cache_global = true;  // .ca (true) / .cg (false)
  int cp_bytes = 0;          // cp.async size
  int ldm_rows = 0;          // ldmatrix/stmatrix .x1/.x2/.x4 (1, 2, 4)
  ShflMode shfl = ShflMode::kBfly;
  MmaKind mma;
};

// Decodes a mnemonic; on failure returns nullopt and sets *error to "what is wrong, what was expected".
std::optional<OpDesc> decode_mnemonic(std::string_view mnemonic, std::string* error);

std::optional<DType> parse_dtype(std::string_view s);

// Valid (shape, operand dtype, accumulator dtype) for mma.sync / wgmma; explains otherwise.
bool valid_mma(const MmaKind& k, bool wgmma, std::string* error);

}  // namespace gtsim::ir
