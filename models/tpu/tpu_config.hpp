// The TPU machine description, read from a `target: tpu` YAML (hw_configs/tpu-*.yaml). Every key
// is read here once; TpuConfig::load() ends with require_all_used() so a typo is an InputError with
// its file:line:col. Keys and their sources are documented in docs/tpu.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/mem/mem_specs.hpp"
#include "sim/config.hpp"

namespace gtsim::tpu {

enum class MxuTiming { kTextbook, kTpuLike };

// Which operand stays in the array (SCALE-Sim's three dataflows, docs/tpu_dataflows.md). For a
// GEMM (M x K) @ (K x N): weight stationary maps K to rows, N to columns, M streams; output
// stationary maps M to rows, N to columns, K streams; input stationary maps K to rows, M to
// columns, N streams. output_stationary and input_stationary need mxu.timing: textbook.
enum class Dataflow { kWeightStationary, kOutputStationary, kInputStationary };

struct MxuConfig {
  uint32_t count = 4;           // MXUs per TensorCore
  uint32_t rows = 128;          // systolic array rows (K side of the weight tile)
  uint32_t cols = 128;          // systolic array columns (N side of the weight tile)
  uint32_t rows_per_cycle = 1;  // LHS rows streamed per cycle (v6e knob: see tpu-v6e.yaml)
  uint32_t f32_passes = 3;      // bf16 passes per f32 matmul (assumed: bf16x3)
  MxuTiming timing = MxuTiming::kTpuLike;
  Dataflow dataflow = Dataflow::kWeightStationary;
  // Words per cycle that one operand port (SRAM -> array edge) delivers; 0 = unlimited. A fold phase
  // that moves W words through a port and takes L cycles unthrottled takes max(L, ceil(W / this)).
  double sram_words_per_cycle = 0;
};

struct VpuConfig {
  uint32_t sublanes = 8;
  uint32_t lanes = 128;
  double alu_ops_per_cycle = 1;       // (8,128) vreg ops per cycle (v4: 2 ALUs per lane-sublane)
  double transcendental_cycles = 4;   // cycles per (8,128) vreg of exp/sin/... (EUP)
  double reduce_cycles_per_tile = 8;  // cross-lane (XLU) reduction of one vreg to a column
};

// The memory side's HBM description (models/mem): the same `hbm:` keys as the GPU configs
// (impl: bandwidth_server | banked, capacity_gb, bandwidth_gbps, burst_bytes, latency_ns).
using HbmConfig = mem::HbmSpecs;

struct TpuConfig {
  std::string name;
  std::string source;  // file the config came from
  uint32_t tensorcores = 1;
  double core_mhz = 1500;
  double stated_peak_bf16_tflops = 0;  // from the datasheet; compared with the derived peak
  double dispatch_us = 0;              // per call (host dispatch + launch), fitted
  uint32_t scalar_issue_cycles = 1;    // scalar core cycles per program step
  MxuConfig mxu;
  VpuConfig vpu;
  double vmem_mib = 128;
  double vmem_bandwidth_gbps = 18000;
  uint32_t dma_engines = 4;
  uint32_t dma_issue_cycles = 16;
  HbmConfig hbm;
  std::string validation_status = "blind";
  double validation_error_band_pct = 0;

  uint64_t vmem_bytes() const { return uint64_t(vmem_mib * 1024.0 * 1024.0); }
  uint64_t hbm_bytes() const { return uint64_t(hbm.capacity_gb * 1e9); }
  // MXU peak from the array: tensorcores x count x rows x cols x 2 x rows_per_cycle x clock.
  double derived_peak_flops() const;
  double hbm_bytes_per_s() const { return hbm.bandwidth_gbps * 1e9; }
  // Ridge point: peak / HBM bandwidth (FLOP per byte).
  double ridge_flop_per_byte() const { return derived_peak_flops() / hbm_bytes_per_s(); }

  // Parses a `target: tpu` root. Unknown keys, a wrong target, unknown impl/timing names
  // (the error lists the registered ones), a derived peak more than 5% from the stated peak
  // are InputErrors with positions.
  static TpuConfig from_node(const ConfigNode& root);
  static TpuConfig load(const std::string& path, const std::vector<std::string>& overrides = {});
};

const char* timing_name(MxuTiming t);
const char* dataflow_name(Dataflow d);

}  // namespace gtsim::tpu
