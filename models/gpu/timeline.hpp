// A timeline of what the GPU did, for Perfetto (ui.perfetto.dev) and chrome://tracing: the Chrome
// trace-event JSON format. Recorded only when asked for (`--trace`): the SMs and the model call it
// through a pointer that is null otherwise.
//
// Tracks: a "kernels" track with one slice per kernel; per SM, one track per CTA slot with the CTAs
// it held as slices, and one track per sub-partition with its state per window of cycles (issuing,
// or the stall that held most of its warps' cycles, or idle); counter tracks for the L2 and DRAM
// bandwidth, the requests in flight and the HBM's backlog. Time is simulated time in microseconds.
// A sampled run (docs/sampling.md) shows only what was simulated: the fast-forwarded cycles are
// said on each kernel's slice. Recording stops at a limit on events, said in the file.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace gtsim::gpu {

struct TimelineOptions {
  uint64_t max_events = 2'000'000;  // slices and counter samples; recording stops there (said in the file)
  uint32_t window_cycles = 1000;    // a sub-partition's state and the counters: one value per window
};

// What a warp's cycles before an issue were spent on (Sm::account_stalls, Sm::release).
enum class StallKind : uint8_t { kMemory, kDependency, kUnitBusy, kNotSelected, kBarrier, kCount };

// The memory system's state at one moment, for the counter tracks (cumulative counts).
struct MemorySample {
  uint64_t l2_sectors = 0, dram_read_bytes = 0, dram_write_bytes = 0, requests_in_flight = 0;
  Tick hbm_backlog = 0;
};

class Timeline {
 public:
  Timeline(const TimelineOptions& opt, const ClockDomain& clock, uint32_t sms, uint32_t sub_partitions,
           uint32_t cta_slots, std::function<MemorySample()> memory);

  void begin_kernel(const std::string& name, uint64_t start_cycle);
  // `args`: what the kernel's slice carries (cycles, sampling).
  void end_kernel(uint64_t end_cycle, nlohmann::json args);

  // Hooks from the SMs (cheap when recording has stopped).
  void cta_begin(uint32_t sm, uint32_t slot, uint64_t cta, uint64_t cycle);
  void cta_end(uint32_t sm, uint32_t slot, uint64_t cycle);
  void issued(uint32_t sm, uint32_t sp, uint64_t cycle);
  // Warp-cycles [from, to) of one warp spent on `kind`.
  void stalled(uint32_t sm, uint32_t sp, StallKind kind, uint64_t from, uint64_t to);
  // A counter sample when `cycle` has passed the next window's start (called on SM events).
  void poll(uint64_t cycle) {
    if (cycle >= next_sample_) sample(cycle);
  }

  // The trace: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}, each track's
  // events in time order.
  nlohmann::json to_json() const;
  uint64_t events() const { return events_; }

 private:
  struct Window {
    uint32_t issued = 0;
    std::array<uint32_t, size_t(StallKind::kCount)> stall{};
  };
  struct Slice {
    int pid = 0, tid = 0;
    std::string name;
    double ts = 0, dur = 0;
    nlohmann::json args;
  };
  struct CounterSample {
    std::string name;
    double ts = 0;
    nlohmann::json args;
  };
  // True while `events` more fit under the limit; else notes where recording stopped.
  bool recording(uint64_t cycle, uint64_t events = 1);
  Window* window(uint32_t sm, uint32_t sp, uint64_t cycle);
  void sample(uint64_t cycle);
  void flush_windows(uint64_t end_cycle);
  double us(uint64_t cycle) const;

  TimelineOptions opt_;
  const ClockDomain& clock_;
  uint32_t sms_, sps_, slots_;
  std::function<MemorySample()> memory_;
  std::vector<Slice> slices_;
  std::vector<CounterSample> counters_;
  std::vector<uint64_t> cta_open_;  // per SM and slot: the CTA's start cycle (kNone when empty)
  std::vector<uint64_t> cta_id_;
  // The current kernel's windows, per SM and sub-partition, from kernel_start_ on.
  std::vector<std::vector<Window>> windows_;
  std::string kernel_;
  uint64_t kernel_start_ = 0, next_sample_ = ~0ull, events_ = 0, stopped_at_ = ~0ull;
  MemorySample last_;
  uint64_t last_cycle_ = 0;
  uint32_t kernels_ = 0;
};

// The timelines of machines that ran one after another (a workload without L2 carry-over: each
// kernel on a fresh machine) as one trace, each placed after the one before it ends.
nlohmann::json join_timelines(const std::vector<nlohmann::json>& parts);

}  // namespace gtsim::gpu
