// Helpers for the memory-side unit tests: a small machine config, synthetic warp accesses and a
// responder that records completions.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels_ir/exec/dyn_inst.hpp"
#include "models/mem/memory_system.hpp"
#include "sim/config.hpp"
#include "sim/simulation.hpp"

namespace gtsim::mem::testing {

// 1 GHz SM clock so cycles == ns; small caches so capacity effects show quickly.
inline std::string small_machine_yaml(const std::string& hbm_extra = "") {
  return R"(clocks: {sm_mhz: 1000, mem_mhz: 1000}
l1: {unified_kb: 64, line_bytes: 128, sector_bytes: 32, assoc: 4, latency_cycles: 30, mshrs: 64, requests_per_cycle: 1, bytes_per_cycle: 128}
noc: {bytes_per_cycle_per_sm: 64, latency_cycles: 20}
l2: {size_bytes: 1048576, partitions: 2, slices: 16, assoc: 16, line_bytes: 128, sector_bytes: 32, hit_latency_cycles: 200, far_extra_cycles: 0, bytes_per_cycle_per_slice: 64}
hbm: {impl: bandwidth_server, capacity_gb: 1, bandwidth_gbps: 400, burst_bytes: 32, latency_ns: 300)" +
         hbm_extra + "}\n";
}

struct Recorder : MemResponder {
  std::vector<std::pair<uint64_t, Tick>> done;
  void on_mem_complete(uint64_t token, Tick when) override { done.emplace_back(token, when); }
};

struct MemFixture {
  explicit MemFixture(const std::string& yaml = small_machine_yaml(), uint32_t sms = 2)
      : cfg(ConfigNode::load_string(yaml)) {
    mem = GpuMemorySystem::create(sim, sim.stats(), *cfg, sms);
  }
  Simulation sim;
  std::shared_ptr<ConfigNode> cfg;
  std::unique_ptr<GpuMemorySystem> mem;
  Recorder rec;
  // Issues and runs to completion; returns the completion tick.
  Tick run_one(uint32_t sm, const ir::DynInst& inst, IssueInfo* info = nullptr) {
    size_t before = rec.done.size();
    IssueInfo i = mem->issue(sm, inst, sim.now(), &rec, before);
    if (info) *info = i;
    sim.run();
    return rec.done.size() > before ? rec.done.back().second : 0;
  }
};

// A warp access: lane i at base + i * stride_bytes, `bytes` per lane.
inline ir::DynInst warp_access(ir::OpClass op, uint64_t base, uint64_t stride_bytes, uint8_t bytes,
                               uint32_t active = ir::kFullMask) {
  ir::DynInst d;
  d.op = op;
  d.access_bytes = bytes;
  d.active = d.addr_active = active;
  d.live = ir::kFullMask;
  for (int i = 0; i < ir::kWarpSize; ++i) d.addr[i] = base + uint64_t(i) * stride_bytes;
  return d;
}

}  // namespace gtsim::mem::testing
