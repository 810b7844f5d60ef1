// A timeline of what the TPU chip did, for Perfetto (ui.perfetto.dev) and chrome://tracing: the
// Chrome trace-event JSON format, with the conventions of the GPU's timeline (models/gpu/timeline.hpp):
// time is simulated time in microseconds, one process per block, recording stops at a limit on
// events and the file says where. Recorded only when asked for (`--trace`): the TensorCores call it
// through a pointer that is null otherwise.
//
// Tracks: "chip" with the dispatch and one slice per chip program (call), and for a workload one
// slice per op; per TensorCore, the scalar unit's waits (on a DMA semaphore, at a sync point), the
// vector unit's ops, each DMA engine's transfers (direction and bytes in args) and per MXU its folds
// (busy: from the weight push, or the end of the fold before, to the end of the drain), weight
// pushes, streams and drains (drains of consecutive folds overlap in the array: one lane each); an
// HBM bandwidth counter (each DMA's bytes spread evenly over its time).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/tpu/tpu_config.hpp"
#include "sim/time.hpp"

namespace gtsim::tpu {

struct TimelineOptions {
  uint64_t max_events = 2'000'000;  // slices and counter samples; recording stops there (said in the file)
  uint32_t window_cycles = 1000;    // core cycles per HBM bandwidth sample
};

class TpuTimeline {
 public:
  TpuTimeline(const TimelineOptions& opt, const TpuConfig& cfg);

  // From TpuModel::run: one chip program. Times of the hooks below are ticks from the call's start.
  void begin_call(const std::string& program);
  void end_call(Tick device_end);

  // Hooks from the TensorCores.
  void dma(uint32_t tc, uint32_t engine, Tick start, Tick end, bool to_hbm, uint64_t bytes, uint64_t useful_bytes,
           const std::string& buffer, uint32_t semaphore);
  void weight_load(uint32_t tc, uint32_t mxu, Tick start, Tick end, uint32_t k, uint32_t n);
  // One fold: busy from `busy_from` (the MXU's busy time counts [busy_from, drain_end)).
  void fold(uint32_t tc, uint32_t mxu, Tick busy_from, Tick stream_start, Tick stream_end, Tick drain_end,
            uint32_t rows, uint32_t k, uint32_t n);
  void vector(uint32_t tc, Tick start, Tick end, uint32_t rows, uint32_t cols, uint64_t vregs, double alu_ops,
              double transcendentals, bool reduce);
  // The scalar unit waited from `from` to `to` (`what`: "wait sem 2", "sync").
  void scalar_wait(uint32_t tc, const std::string& what, Tick from, Tick to);

  // A workload op: `programs` calls in order, `time_us` of device time (may exceed the calls' sum:
  // an approximated backward).
  struct OpSpan {
    std::string name, kind;
    int programs = 0;
    double time_us = 0;
    std::string note;
  };
  // The trace: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}. The dispatch
  // first, then the calls one after another (with `ops`, grouped into the ops' slices).
  nlohmann::json to_json(const std::vector<OpSpan>* ops = nullptr) const;
  uint64_t events() const { return events_; }

  // The thread's active timeline (TimelineScope): a TpuModel without its own records there, so that
  // callers that build models internally (run_tpu_workload) can be traced.
  static TpuTimeline* active();

 private:
  struct Slice {
    int pid = 0, tid = 0;
    uint32_t call = 0;
    std::string name;
    Tick ts = 0, dur = 0;
    nlohmann::json args;
  };
  struct Dma {
    uint32_t call = 0;
    Tick start = 0, end = 0;
    bool write = false;
    uint64_t bytes = 0;
  };
  bool recording(Tick t, uint64_t events = 1);
  void add(int pid, int tid, std::string name, Tick ts, Tick end, nlohmann::json args);

  TimelineOptions opt_;
  ClockDomain clock_;
  double dispatch_us_ = 0;
  uint32_t mxus_ = 1;
  std::vector<Slice> slices_;
  std::vector<Dma> dmas_;
  std::vector<std::string> calls_;
  std::vector<Tick> call_end_;
  std::vector<std::vector<Tick>> drain_lanes_;  // per TensorCore and MXU: each lane's last drain end
  uint64_t events_ = 0;
  bool stopped_ = false;
  uint32_t stopped_call_ = 0;
  Tick stopped_at_ = 0;
};

// Makes `t` the thread's active timeline while in scope.
class TimelineScope {
 public:
  explicit TimelineScope(TpuTimeline* t);
  ~TimelineScope();
  TimelineScope(const TimelineScope&) = delete;
  TimelineScope& operator=(const TimelineScope&) = delete;

 private:
  TpuTimeline* prev_;
};

}  // namespace gtsim::tpu
