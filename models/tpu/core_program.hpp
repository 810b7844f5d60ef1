// The TPU "dialect": a core program that one TensorCore's scalar unit issues step by step.
//
//   dma.in  BUF rows x cols -> sem S      HBM -> VMEM (asynchronous; signals semaphore S)
//   dma.out BUF rows x cols -> sem S      VMEM -> HBM
//   wait    sem S                          blocks issue until one DMA on S has completed
//   mxu.load_weights MXU k x n from BUF    pushes a k x n weight tile (k <= rows, n <= cols)
//   mxu.matmul MXU m rows from BUF         streams m LHS rows through the loaded weights
//   (mxu.dataflow output/input stationary: the pair is the block (m x k) @ (k x n), of any size,
//   which the MXU folds over its array: docs/tpu_dataflows.md)
//   vpu.op BUF rows x cols ops=A trans=T [reduce]   elementwise on (8,128) vregs
//   sync                                   blocks issue until every MXU and vector op is done
//   loop N { ... }                         repeats its body N times (never unrolled)
//
// The program is plain C++ data, independent of the kernel IR's text syntax (sharing the IR front
// end, parameters and expressions, is a later step). verify() checks it against a TpuConfig.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/tpu/tpu_config.hpp"

namespace gtsim::tpu {

enum class StepKind : uint8_t { kDmaIn, kDmaOut, kWait, kLoadWeights, kMatmul, kVector, kSync, kLoop, kEndLoop };

// A VMEM allocation: rows x cols elements of elt_bytes, laid out in (8 * 4/elt_bytes, 128) tiles.
struct VmemBuffer {
  std::string name;
  uint32_t rows = 0, cols = 0;
  uint32_t elt_bytes = 2;
  uint32_t slots = 1;  // 2 = double-buffered
};

struct Step {
  StepKind kind = StepKind::kSync;
  uint16_t unit = 0;    // MXU index (load_weights, matmul) or semaphore (dma, wait)
  uint16_t passes = 1;  // matmul: MXU passes per row (f32 = several bf16 passes)
  uint32_t buffer = 0;  // VMEM buffer index
  uint32_t rows = 0, cols = 0;
  uint32_t count = 0;         // loop trip count
  float alu_ops = 0;          // vector: ALU ops per element
  float transcendentals = 0;  // vector: transcendental ops per element
  bool reduce = false;        // vector: includes a cross-lane row reduction

  static Step dma_in(uint32_t buf, uint16_t sem, uint32_t rows, uint32_t cols);
  static Step dma_out(uint32_t buf, uint16_t sem, uint32_t rows, uint32_t cols);
  static Step wait(uint16_t sem);
  static Step load_weights(uint16_t mxu, uint32_t buf, uint32_t k, uint32_t n);
  static Step matmul(uint16_t mxu, uint32_t buf, uint32_t m, uint16_t passes = 1);
  static Step vector(uint32_t buf, uint32_t rows, uint32_t cols, float alu_ops, float trans, bool reduce = false);
  static Step sync();
  static Step loop(uint32_t count);
  static Step end_loop();
};

struct CoreProgram {
  std::string name;
  std::vector<VmemBuffer> buffers;
  std::vector<Step> steps;
  uint16_t semaphores = 0;

  uint32_t add_buffer(std::string name, uint32_t rows, uint32_t cols, uint32_t elt_bytes, uint32_t slots = 1);
  uint16_t add_semaphore() { return semaphores++; }
  void push(const Step& s) { steps.push_back(s); }
};

// What a chip runs for one call: one core program per TensorCore (cores may be empty), plus the
// op's own accounting for reports.
struct ChipProgram {
  std::string name;
  std::vector<CoreProgram> cores;
  uint64_t useful_flops = 0;         // FLOPs of the op as written (no padding)
  uint64_t min_hbm_bytes = 0;        // each input read once, each output written once
  uint64_t hbm_footprint_bytes = 0;  // tensors resident in HBM during the call
  bool uses_mxu = false;
};

// (sublane rows, lanes) of one VMEM/HBM tile for an element size: (8,128) for 32-bit,
// (16,128) for bf16, (32,128) for 8-bit, as XLA's T(8,128)(2,1) layouts.
uint32_t tile_rows(uint32_t elt_bytes);
uint64_t padded_bytes(uint32_t rows, uint32_t cols, uint32_t elt_bytes);
uint64_t buffer_bytes(const VmemBuffer& b);  // padded, times slots

// Checks the program against the machine: VMEM capacity (sizes named), tile shapes against the
// MXU array, MXU and buffer indices, matmul before any weight load, loops balanced, and a wait
// on a semaphore that no DMA has signalled. Throws InputError with one diagnostic per problem
// ("core program NAME:STEP: ...").
void verify(const CoreProgram& p, const TpuConfig& cfg);

// Text form, one step per line (for docs, debugging and `--dump`).
std::string to_text(const CoreProgram& p);

}  // namespace gtsim::tpu
