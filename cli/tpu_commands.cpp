// gtsim run / workload on TPU configs.
#include "cli/tpu_commands.hpp"

#include <charconv>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/cli_util.hpp"
#include "cli/trace_output.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "kernels_ir/parser.hpp"
#include "models/tpu/compare.hpp"
#include "models/tpu/from_ir.hpp"
#include "models/tpu/tpu_model.hpp"
#include "sim/error.hpp"
#include "sim/simulation.hpp"

namespace gtsim::cli {

bool is_tpu_config(const ConfigNode& hw) { return hw.param<std::string>("target").or_default("gpu") == "tpu"; }

TilingTriple parse_tiling(const std::string& text) {
  SourcePos pos{"<--tiling " + text + ">"};
  uint64_t v[3] = {0, 0, 0};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t end = i < 2 ? text.find('x', start) : text.size();
    if (end == std::string::npos || (i == 2 && text.find('x', start) != std::string::npos))
      throw InputError(pos,
                       "--tiling " + text + ": expected BMxBKxBN, e.g. 512x1024x1024 (0 = chosen by the lowering)");
    auto [p, ec] = std::from_chars(text.data() + start, text.data() + end, v[i]);
    if (ec != std::errc() || p != text.data() + end || start == end)
      throw InputError(pos, "--tiling " + text + ": \"" + text.substr(start, end - start) +
                                "\" is not a non-negative integer; expected BMxBKxBN, e.g. 512x1024x1024");
    start = end + 1;
  }
  return {v[0], v[1], v[2]};
}

namespace {

std::string mb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f MB", bytes / 1e6);
  return b;
}

std::string run_report(const nlohmann::json& j, const tpu::TpuConfig& cfg) {
  std::ostringstream os;
  char buf[400];
  const nlohmann::json& v = j["validation"];
  os << "gtsim run: " << j.value("kernel", "?") << " on " << j.value("hw", "?") << " (TPU)  [config "
     << v.value("status", "unknown");
  if (v.contains("derived_by"))  // --set, or a copy with other values: not the machine fitted
    os << " from a " << v.value("derived_from", std::string("?")) << " config by " << v["derived_by"].get<std::string>()
       << ": not validated";
  os << "]\n";
  std::snprintf(buf, sizeof buf,
                "  time          %.3f us  (device %.3f us = %llu cycles at %.0f MHz + dispatch %.2f us)\n",
                j.value("time_us", 0.0), j.value("device_us", 0.0), (unsigned long long)j.value("cycles", uint64_t(0)),
                cfg.core_mhz, j.value("dispatch_us", 0.0));
  os << buf;
  std::snprintf(buf, sizeof buf,
                "  MXU           %llu cycles busy (busiest of %u x %u MXUs), utilization %.1f%%, array fill %.1f%% "
                "(padding waste %.1f%%)\n",
                (unsigned long long)j.value("mxu_cycles", uint64_t(0)), cfg.tensorcores, cfg.mxu.count,
                100 * j.value("mxu_utilization", 0.0), 100 * j.value("mxu_array_fill", 0.0),
                100 * (1 - j.value("mxu_array_fill", 1.0)));
  os << buf;
  os << "  HBM           read " << mb(j.value("hbm_read_bytes", 0.0)) << ", write "
     << mb(j.value("hbm_write_bytes", 0.0)) << " (without tile padding " << mb(j.value("hbm_useful_bytes", 0.0))
     << "; minimum " << mb(j.value("min_hbm_bytes", 0.0)) << "), busy "
     << int(100 * j.value("hbm_busy_frac", 0.0) + 0.5) << "% of the device time\n";
  os << "  VMEM          " << mb(j.value("vmem_bytes", 0.0))
     << " moved (DMAs, vector loads and stores, MXU weights, LHS rows and f32 results)\n";
  std::snprintf(buf, sizeof buf, "  vector unit   busy %.1f%% of the device time, %llu vregs\n",
                100 * j.value("vpu_busy_frac", 0.0), (unsigned long long)j.value("vpu_vregs", uint64_t(0)));
  os << buf;
  std::snprintf(buf, sizeof buf, "  bound         %s; attained %.1f TFLOP/s (%.1f%% of the stated peak), %.1f flop/B\n",
                j.value("bound", std::string("?")).c_str(), j.value("achieved_tflops", 0.0),
                j.value("pct_of_peak", 0.0), j.value("arithmetic_intensity", 0.0));
  os << buf;
  std::snprintf(buf, sizeof buf, "  simulator     %.3f s host, %llu events (the TPU model is event-driven and exact)\n",
                j.value("sim_wall_seconds", 0.0), (unsigned long long)j.value("events", uint64_t(0)));
  os << buf;
  return os.str();
}

// The workload's calls run one after another on one chip, so their device times add up to the
// machine's simulated time: --max-sim-seconds applies to the sum (each call's own Simulation also
// stops at it, and at --max-events). Checked before anything is written.
void check_workload_sim_time(const tpu::TpuWorkloadReport& r) {
  double device_s = (r.total_us - r.dispatch_us) * 1e-6, limit = run_limits().max_sim_seconds;
  if (device_s <= limit) return;
  std::ostringstream os;
  os << "simulated time limit reached: the workload's " << r.ops.size() << " ops take " << device_s
     << " s of simulated device time together (the limit is " << limit << " s); raise it with --max-sim-seconds";
  throw LimitError(os.str());
}

}  // namespace

int run_tpu_kernel(const ConfigNode& hw, const TpuRunRequest& req) {
  tpu::TpuConfig cfg = tpu::TpuConfig::from_node(hw);
  std::shared_ptr<const ir::Kernel> kernel = ir::parse_kernel_file(req.kernel);
  if (!kernel->tpu)
    throw InputError(SourcePos{req.kernel, kernel->loc.line, kernel->loc.col},
                     "kernel " + kernel->name + " is a GPU kernel, and " + req.hw_path +
                         " is a TPU config: run it on a GPU config (hw_configs/h200-sxm.yaml, a100-40gb.yaml, ...), "
                         "or run a TPU-dialect kernel (kernels_ir/lib/tpu_*.kir) or a workload here");
  ir::ParamValues pv = parse_params(req.params);
  check_known_params(req.kernel, *kernel, pv);
  tpu::ChipProgram chip = tpu::chip_program_from_ir(*kernel, pv, cfg);
  auto timeline = make_tpu_timeline(req.trace, cfg);  // null without --trace
  tpu::TpuModel model(cfg);
  model.record_timeline(timeline.get());
  tpu::RunResult r = model.run(chip);
  nlohmann::json j = r.to_json();
  j["kernel"] = kernel->name;
  j["hw_file"] = req.hw_path;
  j["dram_read_bytes"] = r.hbm_read_bytes;  // the GPU report's keys: HBM is the DRAM
  j["dram_write_bytes"] = r.hbm_write_bytes;
  j["sampling"] = {{"exact", true}, {"fraction_simulated", 1.0}, {"estimated_error_pct", 0.0}};
  j["validation"] = validation_label(hw, "", req.sets);
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : pv) params[name] = value;
  j["params"] = params;
  if (!req.stats) j.erase("stats");
  if (timeline) write_trace(*req.trace, timeline->to_json());
  if (!req.json.empty()) write_output(req.json, j.dump(2) + "\n");
  if (req.json != "-") std::cout << run_report(j, cfg);
  return 0;
}

int run_tpu_workload_command(const ConfigNode& hw, const TpuWorkloadRequest& req) {
  tpu::TpuConfig cfg = tpu::TpuConfig::from_node(hw);
  auto w = wl::Workload::load_file(req.workload, wl::parse_param_overrides(req.params));
  tpu::TpuRunOptions opt;
  opt.fusion = req.fusion;
  opt.recompute = req.recompute;
  if (!req.tiling.empty()) {
    TilingTriple t = parse_tiling(req.tiling);
    opt.lower.tiling = {t.bm, t.bk, t.bn};
  }
  auto timeline = make_tpu_timeline(req.trace, cfg);
  tpu::TimelineScope scope(timeline.get());  // the models run_tpu_workload builds record there
  tpu::TpuWorkloadReport r = tpu::run_tpu_workload(cfg, w, opt);
  check_workload_sim_time(r);
  if (timeline) write_trace(*req.trace, tpu_workload_trace(*timeline, r));
  r.json["workload"] = w.name();
  r.json["hw_file"] = req.hw_path;
  r.json["total_us_device"] = r.total_us - r.dispatch_us;
  r.json["validation"] = validation_label(hw, "", req.sets);
  if (!req.json.empty()) write_output(req.json, r.json.dump(2) + "\n");
  if (req.json != "-") std::cout << r.text;
  return 0;
}

}  // namespace gtsim::cli
