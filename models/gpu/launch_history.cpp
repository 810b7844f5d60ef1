#include "models/gpu/launch_history.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels_ir/ast.hpp"

namespace gtsim::gpu {

const char* l2_start_name(L2Start s) {
  switch (s) {
    case L2Start::kHot:
      return "hot";
    case L2Start::kResident:
      return "resident";
    case L2Start::kRotating:
      return "rotating";
    default:
      return "empty";
  }
}

L2Start parse_l2_start(const std::string& word) {
  if (word == "empty") return L2Start::kEmpty;
  if (word == "hot") return L2Start::kHot;
  if (word == "resident") return L2Start::kResident;
  if (word == "rotating") return L2Start::kRotating;
  throw std::invalid_argument("unknown L2 start \"" + word + "\"; expected empty, hot, resident or rotating");
}

uint64_t config_l2_bytes(const ConfigNode& root) { return root.at("l2").param<uint64_t>("size_bytes").get(); }

namespace {
// Earlier launches' buffers: regions from 2^41 up (clear of the usual placement from 2^32 and of the
// workloads' regions from 2^40), each rounded up to 2 MiB with a 2 MiB gap.
constexpr uint64_t kRegionBase = uint64_t(1) << 41;
constexpr uint64_t kRegionAlign = uint64_t(2) << 20;

// The bytes of the buffers the kernel loads from or stores to: what a launch touches.
uint64_t touched_bytes(const ir::Program& program) {
  uint64_t bytes = 0;
  for (const auto& b : program.buffers())
    if (b.read || b.written) bytes += b.bytes;
  return bytes;
}

// kResident: each buffer the kernel touches, its last `share` of bytes (all of it when the buffers fit
// in the L2), in kChunks chunks taken round-robin over the buffers, so that the L2's LRU order mixes
// them as a launch streaming through all of them leaves it.
void preload_buffers(GpuModel& model, const ir::Program& program, uint64_t l2_bytes) {
  constexpr uint64_t kChunks = 64;
  uint64_t footprint = touched_bytes(program);
  if (footprint == 0) return;
  double share = std::min(1.0, double(l2_bytes) / double(footprint));
  for (uint64_t c = 0; c < kChunks; ++c)
    for (const auto& b : program.buffers()) {
      if (!(b.read || b.written)) continue;
      uint64_t keep = uint64_t(double(b.bytes) * share);
      uint64_t start = b.base + (b.bytes - keep);
      uint64_t lo = start + keep * c / kChunks, hi = start + keep * (c + 1) / kChunks;
      if (hi > lo) model.preload_l2(lo, hi - lo, b.written);
    }
}
}  // namespace

HistoryRun run_after_history(GpuModel& model, const ir::Kernel& kernel, const ir::Program& program,
                             const LaunchHistory& history, uint64_t l2_bytes) {
  HistoryRun out;
  if (history.start == L2Start::kHot) {
    model.run(program);
    out.earlier = 1;
  } else if (history.start == L2Start::kResident) {
    preload_buffers(model, program, l2_bytes);
  } else if (history.start == L2Start::kRotating) {
    uint64_t footprint = touched_bytes(program);
    uint64_t earlier = footprint ? (l2_bytes + footprint - 1) / footprint : 0;
    if (history.slots > 0) earlier = std::min(earlier, history.slots - 1);
    uint64_t next = kRegionBase;
    for (uint64_t r = 0; r < earlier; ++r) {
      ir::BufferPlacement place;
      for (const auto& b : program.buffers()) {
        place[b.name] = next;
        next += (b.bytes + kRegionAlign - 1) / kRegionAlign * kRegionAlign + kRegionAlign;
      }
      auto prior = ir::Program::build(kernel, program.params(), place);
      model.run(*prior);
    }
    out.earlier = earlier;
  }
  out.result = model.run(program);
  return out;
}

}  // namespace gtsim::gpu
