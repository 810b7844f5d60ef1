// gtsim calibrate: fits each calibrated parameter of a GPU config from the one microbenchmark that
// isolates it, THROUGH the model (the model adds its own overheads): the isolating benchmark is
// simulated at two values of the parameter, the (near-)linear response is solved for the value that
// reproduces the measurement, and a third run verifies it (secant refinement when it does not).
// Parameters are fitted in dependency order (clock, launch, latencies L1 -> L2 -> HBM, bandwidth,
// tensor rates, burst size); each later fit runs with the earlier fitted values.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "validation/config_edit.hpp"
#include "validation/measured.hpp"
#include "validation/simrun.hpp"

namespace gtsim::validation {

// One calibration benchmark point: the measured observable and the simulated one at the fitted
// value. Its error is a FIT RESIDUAL (the point was used to fit), not accuracy.
struct FitResidual {
  std::string param, label, unit;
  double measured = 0, simulated = 0;
  double err() const { return measured != 0 ? simulated / measured - 1 : std::nan(""); }
};

struct CalibratedParam {
  std::string key;          // config path ("hbm.bandwidth_gbps")
  std::string unit;
  double previous = std::nan("");
  double value = std::nan("");  // fitted
  double se = 0;            // standard error
  std::string written;      // the text written into the config
  double quantum = 0;       // rounding step of the written value (0: none)
  std::string source;       // the cited data file
  std::string kind;         // "fit through the model", "read off the device", "chosen by lowest error", ...
  std::string method;
  double loo_err = std::nan("");  // leave-one-benchmark(-point)-out relative error (RMS)
  std::string loo_note;
  int model_runs = 0;
  std::string comment() const;  // the config comment: "calibrated: FILE (gtsim calibrate, ± se UNIT)"
};

struct CalibrationOptions {
  bool quick = false;       // smaller model runs (tests); same procedure
  unsigned threads = 0;     // 0 = hardware threads
};

struct CalibrationResult {
  std::vector<CalibratedParam> params;
  std::vector<FitResidual> residuals;
  std::vector<std::string> notes;
  size_t model_runs = 0;
  double seconds = 0;
  const CalibratedParam* find(const std::string& key) const;
  // The --set overrides that apply every fitted value (for validation runs of the fitted model).
  std::vector<std::string> overrides() const;
  std::vector<ValueEdit> edits() const;
  nlohmann::json to_json() const;
  std::string table() const;  // human-readable report
};

CalibrationResult calibrate(const std::string& hw_path, const Dataset& data, const std::string& kernels_dir,
                            const CalibrationOptions& opt = {});

// Formats v to about `sig` significant digits without trailing zeros.
std::string fmt(double v, int sig = 4);

}  // namespace gtsim::validation
