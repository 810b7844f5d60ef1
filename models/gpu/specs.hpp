// The SM side's view of a machine config: `name`, `target`, `validation`, `clocks`, `launch`, `sm`
// (and `l1.unified_kb`, the pool shared memory is carved out of). Each block is a Specs struct
// filled by a static parse(); the models only simulate. Keys are documented in docs/gpu_sm.md.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels_ir/exec/dyn_inst.hpp"
#include "sim/config.hpp"

namespace gtsim::gpu {

// The issue pipes of a sub-partition. Each OpClass maps to one (pipe_of()).
enum class Pipe : uint8_t { kFp32, kInt, kFp16, kFp64, kSfu, kShuffle, kLsu, kTensor, kNone, kCount };
inline constexpr int kNumPipes = int(Pipe::kCount);
const char* pipe_name(Pipe p);
Pipe pipe_of(ir::OpClass op);

struct UnitSpecs {
  uint32_t lanes = 32;          // a warp instruction occupies the unit 32 / lanes cycles
  uint32_t latency_cycles = 4;  // issue to result
  uint32_t initiation_interval() const { return ir::kWarpSize / lanes; }
  static UnitSpecs parse(const ConfigNode& node);
};

struct TensorSpecs {
  // Dense flops per cycle per SM by operand dtype (indexed by ir::DType); 0 = not supported.
  std::array<double, size_t(ir::DType::kCount)> mma_sync_flops_per_cycle{};
  std::array<double, size_t(ir::DType::kCount)> wgmma_flops_per_cycle{};
  uint32_t latency_cycles = 32;
  // Cycles an ldmatrix holds the sub-partition's tensor pipe per destination register (32 lanes x
  // 4 B written back): the fragment loads of an mma.sync GEMM do not overlap the mma for free.
  // 0 (the key absent): they overlap completely.
  double ldmatrix_writeback_cycles_per_reg = 0;
  static TensorSpecs parse(const ConfigNode& node);
};

struct SharedSpecs {
  uint32_t banks = 32;
  uint32_t bank_bytes = 4;
  uint32_t latency_cycles = 23;
  // Shared-memory instructions (ld/st.shared, ldmatrix, stmatrix, shared atomics) a sub-partition may
  // have waiting in its MIO queue for the SM's shared pipe; the warp goes on issuing independent
  // instructions meanwhile. 0: an instruction issues only when the pipe is free.
  uint32_t mio_queue_depth = 0;
  // How the shared pipe orders the requests (sm.shared.arbitration): 0 `fifo` (the default) serves
  // each request's wavefronts back to back in issue order; 1 `round_robin` one wavefront a cycle
  // round-robin over the waiting requests; 2 `sub_partition` round-robin over the sub-partitions'
  // MIO queues, each in issue order (models/gpu/shared_pipe.hpp). One warp's wavefronts at most one
  // per `warp_cycles_per_wavefront` cycles (not in fifo).
  uint8_t arbitration = 0;
  uint32_t warp_cycles_per_wavefront = 1;
  // Who waits out a shared instruction's LSU initiation interval at issue (sm.shared.mio_issue):
  // false `sub_partition` (the default) the sub-partition's LSU, so no other warp of it issues a
  // memory instruction meanwhile; true `warp` only the issuing warp (the SASS stall count ptxas puts
  // on back-to-back LDS.128, 4 cycles), while the sub-partition's other warps may issue theirs into
  // the MIO queue.
  bool mio_issue_per_warp = false;
  std::vector<uint32_t> carveouts_kb;   // ascending: the shared-memory sizes the driver can choose
  uint32_t max_per_cta_bytes = 0;       // largest shared allocation one CTA may request (opt-in)
  uint32_t reserved_per_cta_bytes = 0;  // per-CTA system reservation (1 KB on Ampere and Hopper)
  static SharedSpecs parse(const ConfigNode& node);
};

// bar.sync on the SM's barrier unit: it counts one warp's arrival per `cycles_per_warp` and releases
// the CTA `latency_cycles` after counting the last. Absent from the config: 0 and 1 (release on the
// next cycle).
struct BarrierSpecs {
  uint32_t cycles_per_warp = 0;
  uint32_t latency_cycles = 1;
  static BarrierSpecs parse(const ConfigNode& node);
};

struct SmSpecs {
  uint32_t count = 1;
  uint32_t sub_partitions = 4;
  std::string warp_scheduler = "gto";
  uint32_t issue_per_cycle = 1;
  // Integer instructions may issue to the FP32 FMA pipe when the INT pipe is busy (IMAD/IMUL run on
  // the FMA datapath from Volta on); false: the INT pipe only.
  bool int_on_fma = false;
  uint32_t max_threads = 2048;
  uint32_t max_warps = 64;
  uint32_t max_ctas = 32;
  uint32_t max_threads_per_cta = 1024;
  uint32_t registers = 65536;
  uint32_t reg_alloc_unit = 256;
  uint32_t max_regs_per_thread = 255;
  std::array<UnitSpecs, kNumPipes> units{};  // kTensor and kNone unused here (tensor has its own specs)
  TensorSpecs tensor;
  SharedSpecs shared;
  BarrierSpecs barrier;
  static SmSpecs parse(const ConfigNode& node);
};

struct ClockSpecs {
  double sm_mhz = 1000;
  // The SM clock while a kernel that issues tensor-core instructions runs: Hopper lowers its SM
  // clock under tensor-core load. Absent from the config: sm_mhz.
  double sm_mhz_tensor = 1000;
  double mem_mhz = 1000;
  static ClockSpecs parse(const ConfigNode& node);
};

struct LaunchSpecs {
  double overhead_us = 0;    // per kernel, launched back to back from a CUDA graph
  double stream_gap_us = 0;  // added per kernel when launched back to back into a stream instead
  uint32_t cta_dispatch_cycles = 0;
  static LaunchSpecs parse(const ConfigNode& node);
};

struct GpuSpecs {
  std::string name;
  std::string validation_status;
  double validation_error_band_pct = 0;
  // validation.family_error.<this name>: MAPE on throughput per kernel family (gtsim validate
  // --write-error-bands) and where it comes from; empty when this config's name has no table
  std::map<std::string, double> validation_family_error_pct;
  std::string validation_family_error_source;
  ClockSpecs clocks;
  LaunchSpecs launch;
  SmSpecs sm;
  uint32_t l1_unified_kb = 0;  // l1.unified_kb: L1 + shared memory per SM
  // Reads the root of a machine config. Throws InputError (file:line:col) on bad values.
  static GpuSpecs parse(const ConfigNode& root);
};

}  // namespace gtsim::gpu
