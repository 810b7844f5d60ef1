// Per-kernel reporting: the state before a kernel (so a multi-kernel run reports differences)
// and the KernelResult with its Nsight Compute-named metrics.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/gpu/gpu_model.hpp"
#include "models/gpu/occupancy.hpp"
#include "models/gpu/sm.hpp"
#include "models/mem/memory_system.hpp"

namespace gtsim::gpu {

using SmCounterValues = std::array<uint64_t, kNumSmCounters>;

struct KernelSnapshot {
  nlohmann::json stats;
  mem::GpuMemorySystem::Totals memory;
  uint64_t events = 0;
  std::vector<SmCounterValues> sm;
  static KernelSnapshot take(const Simulation& sim, const mem::GpuMemorySystem& memory,
                             const std::vector<std::unique_ptr<Sm>>& sms);
};

struct ReportInputs {
  const GpuSpecs& specs;
  const Occupancy& occ;
  const ir::Program& program;
  const KernelSnapshot& before;
  uint64_t start_cycle = 0, end_cycle = 0;
  double sm_mhz = 0;  // the SM clock the kernel ran at
};

KernelResult make_kernel_result(const ReportInputs& in, const Simulation& sim, const mem::GpuMemorySystem& memory,
                                const std::vector<std::unique_ptr<Sm>>& sms);

// `after` minus `before` for every unsigned integer in the tree; other values as in `after`.
nlohmann::json json_difference(const nlohmann::json& after, const nlohmann::json& before);

}  // namespace gtsim::gpu
