// The TPU dialect of the kernel IR: a `tpu_kernel NAME(PARAMS) { ... }` shares the front end
// (parameters, `let`, expressions, `loop`, `if`) and issues TensorCore instructions instead of
// PTX-like ones (docs/ir.md, "TPU dialect"):
//
//   buffer NAME : T[dims...]                 an HBM tensor
//   vmem NAME : T[rows, cols] slots N         a VMEM buffer (N = 2: double-buffered)
//   dma.load  V[slot], H[offset], TAG[, ROWS, COLS]   HBM -> VMEM, asynchronous, signals TAG
//   dma.store H[offset], V[slot], TAG[, ROWS, COLS]   VMEM -> HBM
//   dma.wait  TAG                             waits for one DMA on TAG
//   mxu.load_weights MXU, V[slot], K, N       pushes a K x N weight tile into MXU
//   mxu.matmul MXU, V[slot], M[, PASSES]      streams M LHS rows through MXU's weights
//   vpu.OP V[slot], ROWS, COLS                elementwise on (8,128) vregs (OP: see kVpuOps)
//   vpu.custom V[slot], ROWS, COLS, ALU, TRANS, REDUCE
//   sync                                      waits for every MXU and vector op
//
// A ROWS x COLS left out is the VMEM buffer's whole slot. expand_tpu() evaluates the kernel for
// given parameters into a flat instruction list; a loop whose iterations expand identically stays
// a loop (the core program's `loop N`), others are unrolled. models/tpu/from_ir.* turns that into
// a tpu::CoreProgram.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/program.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {

bool is_tpu_mnemonic(std::string_view m);

// The GPU verifier's check: every TPU instruction or `vmem` declaration in a GPU kernel.
std::vector<Diagnostic> tpu_instructions_in_gpu_kernel(const Kernel& k);

enum class TpuOpKind : uint8_t { kDmaLoad, kDmaStore, kDmaWait, kLoadWeights, kMatmul, kVector, kSync, kLoop, kEndLoop };

struct TpuOp {
  TpuOpKind kind = TpuOpKind::kSync;
  uint32_t unit = 0;      // MXU (load_weights, matmul) or tag (dma)
  uint32_t buffer = 0;    // index into TpuProgram::vmem
  uint32_t slot = 0;
  uint64_t rows = 0, cols = 0;  // dma: transfer; load_weights: K x N; matmul: rows = M; vector
  uint32_t passes = 1;    // matmul
  uint64_t count = 0;     // loop trip count
  float alu = 0, trans = 0;
  bool reduce = false;
  Loc loc;                // compares equal (ast.hpp)
  bool operator==(const TpuOp&) const = default;
};

struct TpuVmem {
  std::string name;
  uint64_t rows = 0, cols = 0;
  uint32_t elt_bytes = 2, slots = 1;
};

struct TpuHbm {
  std::string name;
  uint64_t elements = 0;
  uint32_t elt_bytes = 2;
};

struct TpuProgram {
  std::string name;
  std::vector<TpuVmem> vmem;
  std::vector<TpuHbm> hbm;
  std::vector<TpuOp> ops;
  uint32_t tags = 0;  // highest DMA tag + 1
};

// Binds the default parameters with `params` over them and expands the kernel; every problem is
// appended to `diags` (file:line:col). Meaningful only when `diags` stays empty.
TpuProgram expand_tpu(const Kernel& k, const ParamValues& params, std::vector<Diagnostic>& diags);

// The TPU verifier: the dialect's rules (instructions, operands, buffer kinds, slots, shapes),
// checked by expanding the kernel. Machine limits (MXU count, VMEM capacity) are checked against a
// TpuConfig by models/tpu/from_ir.
std::vector<Diagnostic> verify_tpu(const Kernel& k, const ParamValues& params = {});

}  // namespace gtsim::ir
