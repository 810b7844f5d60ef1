// --trace PATH.json on `run` and `workload`: the timeline of the simulation as Chrome trace-event
// JSON (ui.perfetto.dev opens it; models/gpu/timeline.hpp says what is on it), with --trace-limit
// (events recorded at most; the file says when recording stopped) and --trace-window (cycles per
// sub-partition state and counter sample). Checked before any simulation: the path, its extension
// and the space the file could take.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/gpu/timeline.hpp"
#include "models/tpu/compare.hpp"
#include "models/tpu/tpu_timeline.hpp"

namespace gtsim::cli {

struct TraceRequest {
  std::string path;
  double limit = 2e6;
  uint32_t window = 1000;
};

std::shared_ptr<TraceRequest> add_trace_options(CLI::App& app);
// Throws InputError (exit 2) for a path not ending in .json, an unwritable path or folder, or a
// limit whose worst-case file would not fit the free space of the path's file system. Returns the
// timeline options to record with, none when no trace was asked for.
std::optional<gpu::TimelineOptions> check_trace_request(const TraceRequest& t);
// Writes the trace whole (nothing half-written) and says where on stderr.
void write_trace(const TraceRequest& t, const nlohmann::json& trace);

// TPU configs (models/tpu/tpu_timeline.hpp): the recorder for a checked request, null for none.
std::unique_ptr<tpu::TpuTimeline> make_tpu_timeline(const TraceRequest* t, const tpu::TpuConfig& cfg);
// A TPU workload's trace: its calls grouped into one slice per op.
nlohmann::json tpu_workload_trace(const tpu::TpuTimeline& tl, const tpu::TpuWorkloadReport& r);

}  // namespace gtsim::cli
