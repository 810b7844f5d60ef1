// Lowering workload ops to GPU kernels in the IR: generated .kir text (parsed by the IR parser)
// plus parameter values. Matmuls lower to kernels_ir/lib/gemm_persistent.kir (planned by
// models/analytic/gemm_plan.hpp, which knows the machine); the rest is generated here.
#pragma once

#include <memory>
#include <string>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/graph/workload.hpp"

namespace gtsim::wl {

struct LoweredKernel {
  std::string name;               // kernel name (valid identifier)
  std::string op;                 // the workload op it implements
  std::string kir;                // generated source text
  std::shared_ptr<ir::Kernel> kernel;
  ir::ParamValues params;
  int64_t full_iterations = 1;    // grid-stride iterations of the whole op
  int64_t iterations = 1;         // iterations this kernel runs (< full when sampled)
  uint64_t bytes_per_iteration = 0;  // tensor bytes one grid-stride iteration touches (all buffers)
  double work_scale = 1;          // elements (rows) of the op / elements (rows) these iterations cover
  // Parameters for iterations [first, first + count) (sampling: warm-up, then the measured slice).
  ir::ParamValues slice(int64_t first, int64_t count) const;
};

struct LowerOptions {
  int ctas = 132 * 8;             // grid of the grid-stride kernels (SMs x CTAs per SM)
  int64_t iteration_limit = 0;    // > 0: simulate only this many grid-stride iterations (sampling)
  bool touch_only = false;        // elementwise: same loads and stores, no arithmetic (L2 warm-up)
};
// Buffers of generated kernels take the default placement alignment (256 bytes, as cudaMalloc).

// Vectorized grid-stride elementwise kernel (one thread handles 16 bytes per access): loads
// each input once, evaluates every output tree (SFU for sin/cos/exp/rcp), stores each output.
LoweredKernel lower_elementwise(const Op& op, const LowerOptions& opt);
// Row softmax: one warp per row, the row read once and written once (max, exp-sum, scale).
LoweredKernel lower_softmax(const Op& op, const LowerOptions& opt);
// Row reduction over the last axis: one warp per row.
LoweredKernel lower_reduction(const Op& op, const LowerOptions& opt);

// Grid-stride iterations of an elementwise / rowwise kernel (for sampling and scaling).
int64_t grid_stride_iterations(const LoweredKernel& k);

}  // namespace gtsim::wl
