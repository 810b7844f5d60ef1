// --trace: options, checks before the run, and writing the file.
#include "cli/trace_output.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "sim/error.hpp"
#include "sim/output_file.hpp"

namespace gtsim::cli {

namespace {
// Bytes one event takes in the file, at most (a slice with its arguments).
constexpr double kBytesPerEvent = 320;
}  // namespace

std::shared_ptr<TraceRequest> add_trace_options(CLI::App& app) {
  auto t = std::make_shared<TraceRequest>();
  auto* g = app.add_option_group("Timeline", "a Chrome trace-event JSON timeline that ui.perfetto.dev opens");
  g->add_option("--trace", t->path,
                "write the timeline to PATH.json: per SM its CTAs and its sub-partitions' states, L2 and HBM "
                "counters (a sampled run shows only the simulated cycles; --exact shows all); on a TPU config per "
                "TensorCore its MXU folds, DMAs, vector ops and scalar waits, and HBM bandwidth");
  g->add_option("--trace-limit", t->limit, "events the timeline records at most; the file says where it stopped")
      ->check(CLI::Range(1.0, 1e9));
  g->add_option("--trace-window", t->window,
                "cycles per sub-partition state and per counter sample (TPU: per HBM bandwidth sample)")
      ->check(CLI::Range(1u, 100000000u));
  return t;
}

std::optional<gpu::TimelineOptions> check_trace_request(const TraceRequest& t) {
  if (t.path.empty()) return std::nullopt;
  SourcePos pos{"<--trace " + t.path + ">"};
  std::filesystem::path p(t.path);
  if (t.path == "-" || p.extension() != ".json")
    throw InputError(pos, "--trace " + t.path +
                              ": the timeline is Chrome trace-event JSON; expected a path "
                              "ending in .json");
  check_output_path(t.path);
  std::error_code ec;
  std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  auto space = std::filesystem::space(folder, ec);
  double need = t.limit * kBytesPerEvent;
  if (!ec && double(space.available) < need) {
    char b[200];
    std::snprintf(b, sizeof b, "a trace of up to %.3g events takes up to %.3g GB, and %s has %.3g GB free", t.limit,
                  need / 1e9, folder.string().c_str(), double(space.available) / 1e9);
    throw InputError(pos, "--trace " + t.path + ": too large to write: " + b + "; lower --trace-limit");
  }
  gpu::TimelineOptions o;
  o.max_events = uint64_t(t.limit);
  o.window_cycles = t.window;
  return o;
}

std::unique_ptr<tpu::TpuTimeline> make_tpu_timeline(const TraceRequest* t, const tpu::TpuConfig& cfg) {
  if (!t || t->path.empty()) return nullptr;
  tpu::TimelineOptions o;
  o.max_events = uint64_t(t->limit);
  o.window_cycles = t->window;
  return std::make_unique<tpu::TpuTimeline>(o, cfg);
}

nlohmann::json tpu_workload_trace(const tpu::TpuTimeline& tl, const tpu::TpuWorkloadReport& r) {
  std::vector<tpu::TpuTimeline::OpSpan> ops;
  for (const auto& op : r.ops) ops.push_back({op.op, op.kind, op.programs, op.time_us, op.note});
  return tl.to_json(&ops);
}

void write_trace(const TraceRequest& t, const nlohmann::json& trace) {
  if (t.path.empty() || trace.is_null()) return;
  write_output(t.path, trace.dump() + "\n");
  const nlohmann::json& other = trace["otherData"];
  std::cerr << "gtsim: wrote the timeline " << t.path << " (" << trace["traceEvents"].size()
            << " events; open it in ui.perfetto.dev)";
  if (other.value("truncated", false)) std::cerr << "; " << other.value("truncated_note", std::string("truncated"));
  std::cerr << "\n";
}

}  // namespace gtsim::cli
