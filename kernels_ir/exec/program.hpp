// A kernel bound to its parameter values: launch shape, buffers with addresses, and the compiled
// warp program. Immutable once built, shareable across threads (each simulation makes its own
// WarpExecutors). This is the "kernel object the engine can run".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::ir {

struct Kernel;  // the parsed kernel (kernels_ir/ast.hpp)

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  // x * y * z, saturated at UINT64_MAX: three 32-bit dimensions can exceed 64 bits (2^96), and a
  // product that wrapped could pass a size check (2^22 x 2^22 x 2^20 threads would read as 0).
  uint64_t count() const {
    uint64_t xy = uint64_t(x) * y, n = 0;  // two 32-bit factors fit
    return __builtin_mul_overflow(xy, uint64_t(z), &n) ? UINT64_MAX : n;
  }
};

struct BufferInfo {
  std::string name;
  DType dtype = DType::kF32;
  uint64_t bytes = 0;                  // footprint in bytes
  uint64_t base = 0;                   // virtual byte address of element 0 (honours the declared alignment)
  bool read = false, written = false;  // statically: does any instruction load / store it
};

struct SourceLoc {
  std::string file;
  int line = 0, col = 0;
};

// One static instruction, for diagnostics (deadlock reports, per-instruction stats, trace output).
struct StaticInstInfo {
  OpClass op = OpClass::kInt;
  std::string text;  // the instruction as printed by the IR printer
  SourceLoc loc;
};

using ParamValues = std::map<std::string, int64_t>;
// Where buffers go: buffer name -> start of its address region. A named buffer is placed at the
// first address of its region that honours its alignment as usual (page-rounded, and for align < 256
// a multiple of align but not of 2*align); buffers not named are placed as usual from 2^32 upward.
// Workloads give each tensor its own region so kernels share data through the L2 (docs/workloads.md).
using BufferPlacement = std::map<std::string, uint64_t>;

class Program {
 public:
  // Binds `kernel` to parameter values (missing ones take their defaults). Throws ir::Error
  // (kernels_ir/error.hpp) with file:line:col when an expression cannot be evaluated.
  static std::shared_ptr<const Program> build(const Kernel& kernel, const ParamValues& params);
  // The same, with buffers placed in the given regions (names that are not buffers are ignored).
  static std::shared_ptr<const Program> build(const Kernel& kernel, const ParamValues& params,
                                              const BufferPlacement& placement);

  const std::string& name() const;
  const ParamValues& params() const;  // every parameter, defaults applied
  Dim3 grid() const;
  Dim3 block() const;
  uint32_t threads_per_cta() const { return block().x * block().y * block().z; }
  uint32_t warps_per_cta() const { return (threads_per_cta() + kWarpSize - 1) / kWarpSize; }
  uint32_t shared_bytes() const;  // static + dynamic shared memory per CTA
  uint32_t regs_per_thread() const;
  const std::vector<BufferInfo>& buffers() const;
  const StaticInstInfo& instruction(uint32_t static_id) const;
  size_t instruction_count() const;
  // Whether the kernel may issue tensor-core instructions (mma.sync, wgmma): one sits outside every
  // if whose condition, of parameters only, rules it out.
  bool uses_tensor_cores() const;

  // The loop sampled simulation may fast-forward (models/gpu/sampler.hpp, docs/sampling.md): a
  // warp-uniform loop whose body carries the kernel's work (global memory, cp.async, barriers, mma),
  // the kernel's `runtime` main loop first. `bra` is its backward branch's static id (issued once per
  // group of `unroll` iterations); skips are whole groups, and multiples of `quantum` groups so that
  // an mbarrier's phase parity and a pipeline's stage index come back to where they were.
  struct SamplingLoop {
    bool exists = false;
    uint32_t loop = 0, bra = 0, unroll = 1, quantum = 1;
  };
  SamplingLoop sampling_loop() const;

  struct Impl;
  explicit Program(std::unique_ptr<Impl> impl);
  ~Program();
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Walks one warp of one CTA through the program, producing its dynamic instructions in order.
// Control flow (loops, if/else under a SIMT reconvergence stack, per-lane predicates) is resolved
// here; data-dependent addresses use values loaded from buffers with an `init` pattern.
class WarpExecutor {
 public:
  WarpExecutor(const Program& program, Dim3 ctaid, uint32_t warp_in_cta);
  ~WarpExecutor();
  WarpExecutor(WarpExecutor&&) noexcept;
  WarpExecutor& operator=(WarpExecutor&&) noexcept;

  // Fills `out` with the next dynamic instruction; returns false when the warp has exited.
  bool next(DynInst& out);

  // Sampling (Program::sampling_loop): iterations of loop `loop` this warp has started in its current
  // run of the loop and that run's trip count (0 before the loop starts), and a request to skip `n`
  // iterations at the warp's next pass of the loop's increment: the loop variable moves on by n steps,
  // as if the iterations had run (their instructions are not issued). Only warp-uniform loops.
  int64_t loop_iterations(uint32_t loop) const;
  int64_t loop_trip(uint32_t loop) const;
  void skip_iterations(uint32_t loop, int64_t n);

  struct State;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace gtsim::ir
