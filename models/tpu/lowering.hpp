// Lowering of workload ops to TPU core programs (one ChipProgram per call the op becomes).
// - matmul: a Pallas-like grid of (bm, bk, bn) blocks, double-buffered DMAs (a block whose index
//   does not change between grid steps is not fetched again), folds of the MXU array (weights
//   k x n <= rows x cols, padded: padding shows as array fill), an f32 accumulator in VMEM and a
//   vector cast on the way out; parallel blocks spread over the chip's TensorCores.
// - elementwise / reduction / softmax: on the vector unit in (8,128) vregs, streamed through VMEM.
// - attention naive: QK^T, softmax and PV as three calls, scores through HBM; blocked (flash-like):
//   one call, score tiles stay in VMEM with an online softmax.
// The op description is neutral (shapes, dtype, op counts) so that both the workload graph and
// tests can build it; models/tpu/compare.* maps the workload graph onto it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/tpu/core_program.hpp"
#include "models/tpu/tpu_config.hpp"

namespace gtsim::tpu {

enum class OpKind { kMatmul, kElementwise, kReduction, kSoftmax, kAttention };

struct OpDesc {
  std::string name;
  OpKind kind = OpKind::kMatmul;
  uint32_t elt_bytes = 2;   // dtype of the inputs (bf16 = 2, f32 = 4, fp8/int8 = 1)
  uint32_t out_bytes = 0;   // dtype of the output of an elementwise or softmax op (a cast's target); 0: elt_bytes
  bool f32_matmul = false;  // f32 operands on the MXU: several bf16 passes
  // matmul: batch x [m x k] @ [k x n]
  uint64_t batch = 1, m = 0, k = 0, n = 0;
  // elementwise / reduction / softmax: a [rows x cols] view (reduction and softmax over cols)
  uint64_t rows = 0, cols = 0;
  uint32_t inputs = 1;        // elementwise: tensors read
  float alu_ops = 1;          // per element
  float transcendentals = 0;  // per element
  // attention: batch_heads x [seq x head_dim]
  uint64_t batch_heads = 1, seq = 0, head_dim = 0;
  bool flash = false;

  uint32_t out_elt_bytes() const { return out_bytes ? out_bytes : elt_bytes; }
  uint64_t flops() const;
  uint64_t min_bytes() const;        // each input read once, each output written once
  uint64_t footprint_bytes() const;  // tensors that must be resident in HBM
};

struct MatmulTiling {
  uint64_t bm = 0, bk = 0, bn = 0;  // 0 = chosen by the lowering
};

struct LowerOptions {
  MatmulTiling tiling;
  uint64_t attention_block = 512;  // flash: query and key/value block
};

// Chooses (bm, bk, bn): 512 x 1024 x 1024 (the JAX Pallas guide's best v5e block) capped by the
// shape; bk grows to the whole K when the panels fit VMEM; shrinks until the buffers fit.
MatmulTiling choose_tiling(const OpDesc& op, const TpuConfig& cfg, MatmulTiling want = {});

// Throws InputError when a dimension of the op is 0 (m, k, n, batch; rows, cols; seq, head_dim):
// the lowering would divide by it.
void check_dims(const OpDesc& op);

// Throws InputError when the op's tensors do not fit the chip's HBM (sizes named).
void check_hbm_capacity(const OpDesc& op, const TpuConfig& cfg);

std::vector<ChipProgram> lower(const OpDesc& op, const TpuConfig& cfg, const LowerOptions& opt = {});

}  // namespace gtsim::tpu
