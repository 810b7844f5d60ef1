// The validation report as JSON, as a terminal summary, as docs/validation.md, and as a
// simulated-vs-measured scatter plot (gnuplot).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "sim/output_file.hpp"
#include "validation/calibrate.hpp"
#include "validation/config_edit.hpp"
#include "validation/validate.hpp"

namespace gtsim::validation {

namespace {
nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json fam_json(const std::vector<FamilyStats>& v) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : v)
    j[f.name] = {{"mape", num(f.mape)},
                 {"worst", num(f.worst)},
                 {"spearman", num(f.spearman)},
                 {"spearman_raw", num(f.spearman_raw)},
                 {"points", f.points}};
  return j;
}

std::string pct(double v) { return std::isfinite(v) ? fmt(v, 3) + "%" : "n/a"; }
}  // namespace

std::string kernel_family(const std::string& k) {
  auto starts = [&](const char* p) { return k.rfind(p, 0) == 0; };
  if (starts("softmax")) return "softmax";
  if (starts("flash_attention")) return "attention_flash";
  if (starts("attn_")) return "attention_naive";
  if (starts("elementwise")) return "elementwise";
  for (const char* g : {"gemm_persistent", "gemm_fp32", "gemm_tiled"})
    if (starts(g)) return g;
  return k;
}

nlohmann::json ValidationReport::to_json() const {
  nlohmann::json j;
  j["hw"] = hw;
  j["data"] = data;
  j["first_shot"] = first_shot.to_json();
  j["heldout"] = {
      {"kind", heldout_kind},
      {"mape", num(heldout_mape)},
      {"worst", num(heldout_worst)},
      {"spearman", num(heldout_spearman)},
      {"spearman_raw", num(heldout_spearman_raw)},
      {"spearman_ties", "points within 3x their repeat spread of each other are tied, measured and simulated"},
      {"spearman_ranks", "throughput: the runner's work / time where it records a throughput, else 1 / time"},
      {"families", fam_json(heldout_families)},
      {"weighting", "families weighted equally; MAPE on throughput (work / time)"}};
  j["fit_benchmark_other_points"] = fam_json(fitbench_families);
  nlohmann::json cal = nlohmann::json::array();
  for (const auto& p : points)
    if (p.role == "calibration" && std::isfinite(p.sim))
      cal.push_back({{"point", p.m->label()},
                     {"quantity", p.quantity},
                     {"unit", p.unit},
                     {"measured", p.meas},
                     {"simulated", p.sim},
                     {"fit_residual_pct", num(p.err() * 100)}});
  j["calibration"] = {{"what", "fit residuals of the calibration benchmarks (used to fit: NOT accuracy)"},
                      {"families", fam_json(calibration_families)},
                      {"points", cal}};
  j["steps"] = {
      {"precision", num(steps.precision())},
      {"recall", num(steps.recall())},
      {"measured", steps.measured},
      {"predicted", steps.predicted},
      {"hits", steps.hits},
      {"wave", {{"measured", steps.wave_measured}, {"predicted", steps.wave_predicted}, {"hits", steps.wave_hits}}},
      {"alignment_other",
       {{"measured", steps.align_measured}, {"predicted", steps.align_predicted}, {"hits", steps.align_hits}}},
      {"list", steps.list},
      {"definition", kStepDefinition}};
  j["blind"] = {{"ran", blind_ran},
                {"hw", blind_hw},
                {"mape", num(blind_mape)},
                {"worst", num(blind_worst)},
                {"families", fam_json(blind_families)}};
  j["launch"] = {{"stream_gap_us", stream_gap_us},
                 {"host_floor_us", host_floor_us},
                 {"what",
                  "stream-timed points: simulated time + stream_gap_us per kernel; those within 20% of the "
                  "host floor excluded"}};
  j["twin_fidelity"] = fidelity.to_json();
  j["ncu"] = ncu_side_by_side;
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : points)
    pts.push_back({{"file", p.m->file},
                   {"row", p.m->row},
                   {"point", p.m->label()},
                   {"family", p.family},
                   {"role", p.role},
                   {"reason", p.reason},
                   {"quantity", p.quantity},
                   {"unit", p.unit},
                   {"measured", p.meas},
                   {"simulated", num(p.sim)},
                   {"measured_time_us", p.m->time_us},
                   {"err_throughput_pct", num(p.err() * 100)},
                   {"sweep", p.sweep},
                   {"x", p.x},
                   {"sim_note", p.sim_note},
                   {"sim_waves", num(p.sim_waves)}});
  j["points"] = pts;
  j["notes"] = notes;
  j["missed_targets"] = missed_targets();
  j["model_runs"] = model_runs;
  j["seconds"] = seconds;
  return j;
}

std::string ValidationReport::summary() const {
  std::ostringstream o;
  o << "held-out (" << heldout_kind << "): MAPE " << pct(heldout_mape) << ", worst " << pct(heldout_worst)
    << ", min Spearman " << fmt(heldout_spearman, 3) << " (raw " << fmt(heldout_spearman_raw, 3) << ")\n";
  for (const auto& f : heldout_families)
    o << "  " << f.name << ": MAPE " << pct(f.mape) << ", worst " << pct(f.worst) << ", Spearman " << fmt(f.spearman, 3)
      << " (" << f.points << " points)\n";
  o << "other points of fitted benchmarks (not held-out):\n";
  for (const auto& f : fitbench_families)
    o << "  " << f.name << ": MAPE " << pct(f.mape) << " (" << f.points << " points)\n";
  o << "calibration fit residuals (NOT accuracy):\n";
  for (const auto& f : calibration_families)
    o << "  " << f.name << ": mean |residual| " << pct(f.mape) << " (" << f.points << " points)\n";
  o << "steps: precision " << fmt(steps.precision(), 3) << ", recall " << fmt(steps.recall(), 3) << " (measured "
    << steps.measured << ", predicted " << steps.predicted << ", hits " << steps.hits << "; wave " << steps.wave_hits
    << "/" << steps.wave_measured << ")\n";
  if (blind_ran)
    o << "blind config " << blind_hw << ": held-out MAPE " << pct(blind_mape) << ", worst " << pct(blind_worst) << "\n";
  for (const auto& t : fidelity.twins)
    o << "twin " << t.batch << " " << t.function << ": regs " << t.twin_regs << " vs IR " << t.ir_regs << ", smem "
      << t.twin_smem << " vs " << t.ir_smem << (t.occupancy_equal ? " (same occupancy)" : " (OCCUPANCY DIFFERS)")
      << (t.sass_checked ? (t.sass_ok ? ", SASS ok" : ", SASS differs") : ", SASS not checked")
      << (t.fails() ? " (points excluded)" : "") << "\n";
  for (const auto& n : notes) o << "note: " << n << "\n";
  for (const auto& m : missed_targets()) o << "target missed: " << m << "\n";
  char b[96];
  std::snprintf(b, sizeof b, "%zu model runs, %.1f s\n", model_runs, seconds);
  o << b;
  return o.str();
}

bool write_scatter_plot(const ValidationReport& r, const std::string& png, std::string& message) {
  namespace fs = std::filesystem;
  std::string base = (fs::path(png).parent_path() / fs::path(png).stem()).string();
  std::string dat = base + ".dat", gp = base + ".gp";
  {
    std::ostringstream d;
    for (const char* role : {"held-out", "fit-benchmark", "calibration"}) {
      d << "# " << role << "\n";
      for (const auto& p : r.points)
        if (p.role == role && std::isfinite(p.sim) && p.quantity == "time")
          d << p.meas << " " << p.sim << " " << p.family << "\n";
      d << "\n\n";
    }
    write_output(dat, d.str());
  }
  {
    std::ostringstream g;
    g << "# gnuplot " << fs::path(gp).filename().string() << " -> " << fs::path(png).filename().string()
      << " (written by gtsim validate)\n"
      << "set terminal pngcairo size 900,800\nset output '" << png << "'\n"
      << "set logscale xy\nset xlabel 'measured time (us)'\nset ylabel 'simulated time (us)'\n"
      << "set title 'gtsim on the H200: simulated vs measured kernel time'\nset key top left\nset grid\n"
      << "plot x title 'exact' lc rgb 'black', 1.1*x title '+-10%' dt 2 lc rgb 'gray', 0.9*x notitle dt 2 lc rgb "
         "'gray', \\\n"
      << "  '" << dat << "' index 0 using 1:2 title 'held-out' pt 7 ps 1.2, \\\n"
      << "  '" << dat << "' index 1 using 1:2 title 'other points of fitted benchmarks' pt 6, \\\n"
      << "  '" << dat << "' index 2 using 1:2 title 'calibration (fit residual)' pt 2\n";
    write_output(gp, g.str());
  }
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) {
    message = "gnuplot not installed: wrote " + gp + " and " + dat + ", no PNG";
    return false;
  }
  int rc = std::system(("gnuplot '" + gp + "' > /dev/null 2>&1").c_str());
  message = rc == 0 ? "wrote " + png : "gnuplot failed on " + gp;
  return rc == 0;
}

void write_error_band(const std::string& config_path, double band_pct, const std::string& comment) {
  edit_config_file(config_path, {{"validation.error_band_pct", fmt(band_pct, 3), comment}});
}

}  // namespace gtsim::validation
