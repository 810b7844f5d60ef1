// gtsim validate: every measured point against the model. Points are classed as
//   calibration   - used by gtsim calibrate (their error is a fit residual, not accuracy),
//   fit-benchmark - other points of a benchmark that calibration used (reported, not held-out),
//   held-out      - families never used for fitting (application kernels; before those exist,
//                   the microbenchmarks calibration does not use, said so in the report),
//   excluded      - host-bound timing, a twin that fails its fidelity check, or not simulated.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "validation/fidelity.hpp"
#include "validation/first_shot.hpp"
#include "validation/measured.hpp"
#include "validation/simrun.hpp"

namespace gtsim::validation {

struct PointResult {
  const MeasuredPoint* m = nullptr;
  std::string family, role, reason, sweep;  // sweep: the group the Spearman and steps run over
  double x = 0;                             // the swept parameter's value
  std::string quantity = "time", unit = "us";
  double meas = 0, sim = std::nan("");  // the compared quantity (time, or ns/hop for the chase)
  double meas_spread = 0;               // of the compared quantity, absolute
  double work = std::nan("");           // the runner's work measure (its throughput column x its median time), if any
  // The throughput the Spearman ranks: work / t where the runner recorded a throughput, else 1 / t.
  double rate(double t) const { return std::isfinite(work) ? work / t : 1 / t; }
  double meas_waves = std::nan(""), sim_waves = std::nan("");
  std::string sim_note;  // e.g. "extrapolated from work = 32, 64"
  nlohmann::json sim_counters = nlohmann::json::object();
  double err() const { return std::isfinite(sim) && meas > 0 ? meas / sim - 1 : std::nan(""); }  // on throughput
};

// The validation family an IR kernel belongs to (kernels_ir/lib name -> the family its measured twins
// are reported under): softmax_rows -> softmax, flash_attention_fwd -> attention_flash, the naive
// attention's GEMMs -> attention_naive, elementwise_* -> elementwise; a microbenchmark is its own family.
std::string kernel_family(const std::string& ir_kernel);

// Whether a CSV's kernel is one of the microbenchmarks (not an application kernel).
bool is_microbenchmark(const std::string& kernel);

// The runner's work measure for a point: its throughput column (TFLOP/s, TB/s or GB/s) times its
// median time (1e6 FLOP or bytes per unit); NaN where the runner records no throughput.
double runner_work(const MeasuredPoint& p);

struct FamilyStats {
  std::string name;
  size_t points = 0;
  double mape = std::nan(""), worst = std::nan(""), spearman = std::nan("");  // percent, percent, min over sweeps
  // spearman ties points that measure within 3x their repeat spread of each other (the step
  // criterion's resolution); spearman_raw ranks every difference, noise included
  double spearman_raw = std::nan("");
};

struct StepStats {
  size_t measured = 0, predicted = 0, hits = 0;
  size_t wave_measured = 0, wave_hits = 0, wave_predicted = 0;
  size_t align_measured = 0, align_hits = 0, align_predicted = 0;
  double precision() const { return predicted ? double(hits) / double(predicted) : std::nan(""); }
  double recall() const { return measured ? double(hits) / double(measured) : std::nan(""); }
  std::vector<nlohmann::json> list;
};

// Steps over the held-out sweeps, on throughput (steps.cpp; kStepDefinition says it in words).
StepStats count_steps(const std::vector<PointResult>& points);
extern const char* const kStepDefinition;

struct ValidationOptions {
  bool quick = false;
  unsigned threads = 0;
  std::vector<std::string> calibration_overrides;  // none: the config as written is the calibrated one
  bool blind = true;                               // also run the blind config (h200-blind.yaml)
  std::string blind_hw;                            // default: h200-blind.yaml beside --hw
  bool sparse = false;                             // fewer points of the long sweeps (GEMMs, flash attention):
                                                   // the blind config's run, the CI accuracy test
  std::vector<std::string> families;               // only these families (none: all)
  bool complete = false;  // no sampling and no run budget: every point the model can run (--first-shot)
};

struct ValidationReport {
  std::string hw, data, heldout_kind;
  std::string device_name = "the H200";  // the measured GPU (device.json of the first batch)  // heldout_kind:
                                         // "application kernels" or "unused microbenchmarks"
  std::vector<PointResult> points;
  std::vector<FamilyStats> heldout_families, fitbench_families, calibration_families;
  double heldout_mape = std::nan(""), heldout_worst = std::nan(""), heldout_spearman = std::nan("");
  double heldout_spearman_raw = std::nan("");
  StepStats steps;
  // the blind config on the same held-out points
  bool blind_ran = false;
  std::string blind_hw;
  std::vector<FamilyStats> blind_families;
  std::vector<PointResult> blind_points;  // the blind config's run (sparse), point by point
  double blind_mape = std::nan(""), blind_worst = std::nan("");
  double stream_gap_us = 0, host_floor_us = 0;  // launch.stream_gap_us of the config; the host's launch floor
  FidelityReport fidelity;
  FirstShotSummary first_shot;  // the batches' first-shot records against this run (validation/first_shot.hpp)
  std::vector<nlohmann::json> ncu_side_by_side;
  std::vector<std::string> notes;
  double seconds = 0;
  size_t model_runs = 0;
  // host time: simulation seconds over all threads, and the slowest runs (key, seconds). Not in the
  // JSON or the document (they vary from run to run); `gtsim validate` prints them on stderr.
  double sim_seconds = 0;
  std::vector<std::pair<double, std::string>> slowest_runs;
  nlohmann::json to_json() const;
  std::string summary() const;
  // Targets: held-out MAPE <= 10% per family and overall, Spearman >= 0.95, step precision/recall >= 0.9.
  std::vector<std::string> missed_targets() const;
};

ValidationReport validate(const std::string& hw_path, const Dataset& data, const std::string& kernels_dir,
                          const ValidationOptions& opt = {});

// docs/validation.md and the scatter plot (gnuplot when installed; skipped otherwise). `fingerprint`:
// inputs_fingerprint of the tree it was written from (validation/inputs_fingerprint.hpp), or "".
std::string validation_markdown(const ValidationReport& r, const nlohmann::json& calibration_json,
                                const std::string& plot_png, const std::string& fingerprint = "");
bool write_scatter_plot(const ValidationReport& r, const std::string& png_path, std::string& message);

// Writes `band` into validation.error_band_pct of a config (line edit, comment citing the source).
void write_error_band(const std::string& config_path, double band_pct, const std::string& comment);

}  // namespace gtsim::validation
