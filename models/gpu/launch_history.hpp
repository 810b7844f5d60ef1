// What the L2 holds when a launch starts. A benchmark times back-to-back launches, so its kernel
// starts on the L2 that the launches before it left behind; which lines those are depends on how the
// benchmark picks its buffers. The model replays that history on the same machine before the launch
// it reports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels_ir/exec/program.hpp"
#include "models/gpu/gpu_model.hpp"

namespace gtsim::ir {
struct Kernel;
}

namespace gtsim::gpu {

enum class L2Start {
  kEmpty,     // a fresh machine: the L2 holds nothing
  kHot,       // the same launch ran just before on the same buffers: its lines are in the L2
  kResident,  // as kHot without simulating that launch: the kernel's buffers are put in the L2 (the ones
              // it writes dirty, interleaved in chunks, the last L2-size of them when they do not fit),
              // as a launch that streamed through them would leave it. Cheap for long kernels
  kRotating,  // earlier launches ran on other buffers (a benchmark rotating through buffer pools, so that
              // no launch finds its data in the L2): the L2 is full of their lines, their stores still
              // dirty, and this launch writes those back to DRAM as it evicts them
};

// "empty", "hot", "resident", "rotating"; parse_l2_start throws std::invalid_argument on any other word.
const char* l2_start_name(L2Start s);
L2Start parse_l2_start(const std::string& word);

struct LaunchHistory {
  L2Start start = L2Start::kEmpty;
  // kRotating: how many buffer sets the benchmark rotates through (0: unbounded). With `slots` sets the
  // launch before the reported one on the same buffers is `slots` launches back, so at most
  // slots - 1 earlier launches use other buffers.
  uint64_t slots = 0;
};

struct HistoryRun {
  KernelResult result;   // the reported launch
  uint64_t earlier = 0;  // launches run before it on the same machine
};

// Runs `program` (bound from `kernel`) on `model` after the history. kRotating runs earlier launches
// with every buffer placed in a fresh address region (ir::BufferPlacement) until together they have
// touched at least the L2's size (`l2_bytes`), so the L2 starts full, as in a benchmark's steady state.
HistoryRun run_after_history(GpuModel& model, const ir::Kernel& kernel, const ir::Program& program,
                             const LaunchHistory& history, uint64_t l2_bytes);

// The L2 size of a GPU config (l2.size_bytes).
uint64_t config_l2_bytes(const ConfigNode& root);

}  // namespace gtsim::gpu
