#include "cli/report.hpp"

#include <cstdio>
#include <sstream>

#include "cli/cli_util.hpp"

namespace gtsim::cli {

std::string traffic_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000.0 && u < 4) b /= 1000.0, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

namespace {
double num(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0;
}
std::string metric(const nlohmann::json& j, const char* k) {
  if (!j.contains("metrics") || !j["metrics"].contains(k)) return "-";
  const auto& v = j["metrics"][k];
  if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v.get<double>());
    return buf;
  }
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

std::string format_run_report(const nlohmann::json& j) {
  std::ostringstream os;
  char buf[512];
  const auto& v = j.value("validation", nlohmann::json::object());
  std::string band =
      v.contains("error_band_pct") && v["error_band_pct"].is_number()
          ? ", expected error about " + std::to_string(int(v["error_band_pct"].get<double>() + 0.5)) + "%"
          : ", error band not yet measured";
  if (v.contains("family")) {  // one kernel: its own family's error, never the config's blanket figure
    const std::string fam = v["family"].get<std::string>();
    band = v.contains("family_error_pct") && v["family_error_pct"].is_number()
               ? "; " + fam + ": expected error about " +
                     std::to_string(int(v["family_error_pct"].get<double>() + 0.5)) + "% (" +
                     v.value("family_error_source", std::string("gtsim validate")) + ")"
               : "; " + fam + ": not validated on this config (no measured point of this family)";
  }
  if (v.contains("derived_by"))  // --set made another machine than the one validated
    band = " from a " + v.value("derived_from", std::string("?")) + " config by " + v["derived_by"].get<std::string>() +
           ": not validated";
  os << "gtsim run: " << j.value("kernel", "?") << " on " << j.value("hw", "?") << "  [config "
     << v.value("status", "unknown") << band << "]\n";
  std::snprintf(buf, sizeof buf, "  time          %.3f us  (%.0f cycles at %.0f MHz + launch %.2f us)\n",
                num(j, "time_us"), num(j, "cycles"), num(j, "sm_mhz"), num(j, "launch_overhead_us"));
  os << buf;
  if (num(j, "launch_stream_gap_us") > 0) {
    std::snprintf(buf, sizeof buf,
                  "                %.3f us per launch back to back in a stream (+ %.2f us stream gap)\n",
                  num(j, "time_us") + num(j, "launch_stream_gap_us"), num(j, "launch_stream_gap_us"));
    os << buf;
  }
  const double waves = num(j, "waves");
  std::snprintf(buf, sizeof buf, "  launch        %.0f CTAs, %.0f per SM (limited by %s), %.0f wave%s", num(j, "ctas"),
                num(j, "ctas_per_sm"), j.value("occupancy_limiter", std::string("?")).c_str(), waves,
                waves == 1 ? "" : "s");
  os << buf;
  if (waves > 0 && num(j, "last_wave_fill") < 1 - 1e-9) {
    std::snprintf(buf, sizeof buf, " (the last %.0f%% full)", 100.0 * num(j, "last_wave_fill"));
    os << buf;
  }
  os << "\n";
  std::snprintf(buf, sizeof buf, "  instructions  %.0f warp instructions, %.3g FLOP\n", num(j, "warp_instructions"),
                num(j, "flops"));
  os << buf;
  double dr = num(j, "dram_read_bytes"), dw = num(j, "dram_write_bytes"), t = num(j, "time_us");
  std::snprintf(buf, sizeof buf, "  DRAM          read %s, write %s, %.1f GB/s", traffic_bytes(dr).c_str(),
                traffic_bytes(dw).c_str(), t > 0 ? (dr + dw) / t / 1e3 : 0.0);
  os << buf;
  if (num(j, "l2_dirty_bytes_at_end") > 0)
    os << "; " << traffic_bytes(num(j, "l2_dirty_bytes_at_end")) << " left dirty in the L2, written back later";
  os << "\n";
  std::snprintf(buf, sizeof buf, "  L2            sector hit rate %.1f%%", 100.0 * num(j, "l2_hit_rate"));
  os << buf;
  if (j.contains("l2_start") && j["l2_start"].value("state", std::string("empty")) != "empty")
    os << " (L2 at the start: " << j["l2_start"].value("state", std::string()) << ", after "
       << j["l2_start"].value("earlier_launches", 0) << " earlier launch"
       << (j["l2_start"].value("earlier_launches", 0) == 1 ? "" : "es") << ")";
  os << "\n";
  os << "  occupancy     achieved " << metric(j, "sm__warps_active.avg.pct_of_peak_sustained_active")
     << "% of peak warps\n";
  os << "  shared        " << metric(j, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum") << " wavefronts, "
     << metric(j, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum") << " bank conflicts\n";
  const auto& smp = j.value("sampling", nlohmann::json::object());
  double simulated = num(j, "warp_instructions") * smp.value("fraction_simulated", 1.0);
  if (smp.value("exact", true))
    os << "  sampling      exact (every CTA and iteration simulated)\n";
  else {
    std::snprintf(buf, sizeof buf,
                  "  sampling      %.1f%% of the warp instructions simulated, estimated error %.2f%% (--exact "
                  "simulates all)\n",
                  100.0 * smp.value("fraction_simulated", 1.0), smp.value("estimated_error_pct", 0.0));
    os << buf;
  }
  double wall = num(j, "sim_wall_seconds");
  std::snprintf(buf, sizeof buf,
                "  simulator     %.3f s host, %.0f events, %.2f M simulated warp inst/s, slowdown %.0fx\n", wall,
                num(j, "events"), wall > 0 ? simulated / wall / 1e6 : 0.0, t > 0 ? wall / (t * 1e-6) : 0.0);
  os << buf;
  return os.str();
}

std::string resolved_config_text(const ConfigNode& hw, const std::string& path) {
  return "# resolved from " + path + " by gtsim " + git_revision() + "\n" + hw.to_yaml();
}

}  // namespace gtsim::cli
