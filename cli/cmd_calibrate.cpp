// gtsim calibrate: fit the calibrated parameters of a GPU config from the measured
// microbenchmarks (validation/data/<gpu>), through the model, and write them into the config.
#include <iostream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/limits.hpp"
#include "validation/calibrate.hpp"

namespace gtsim::cli {

namespace {
struct CalibrateOptions {
  std::string hw, data, json, kernels;
  bool dry_run = false, quick = false;
  unsigned threads = 0;
};
}  // namespace

Runner add_calibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  app.add_option("--hw", o->hw, "GPU config to calibrate IN PLACE (e.g. hw_configs/h200-sxm.yaml; no base:)")
      ->required();
  app.add_option("--data", o->data, "measured data folder (e.g. validation/data/h200; batches inside)")->required();
  app.add_option("--json", o->json,
                 "write the fit (values, uncertainties, leave-one-out, residuals) as JSON to PATH ('-' = stdout)");
  app.add_option("--kernels", o->kernels,
                 "IR kernel library (default: kernels_ir/lib found from --data or the working folder)");
  app.add_option("--threads", o->threads, "simulation threads (default: all cores)");
  app.add_flag("--dry-run", o->dry_run, "fit and report, but do not write the config");
  app.add_flag("--quick", o->quick, "smaller model runs (same procedure; for tests)");
  auto limits = add_limit_options(app);
  return [o, limits]() {
    apply_limits(*limits);
    check_output_path(o->json);
    auto data = validation::load_dataset(o->data);
    std::string kdir = o->kernels.empty() ? validation::find_kernels_dir(o->data) : o->kernels;
    validation::CalibrationOptions opt;
    opt.quick = o->quick;
    opt.threads = o->threads;
    auto res = validation::calibrate(o->hw, data, kdir, opt);
    if (!o->dry_run) validation::edit_config_file(o->hw, res.edits());
    nlohmann::json j = res.to_json();
    j["hw_file"] = o->hw;
    j["data"] = o->data;
    j["written"] = !o->dry_run;
    if (!o->json.empty()) write_output(o->json, j.dump(2) + "\n");
    if (o->json != "-") {
      std::cout << res.table();
      std::cout << (o->dry_run ? "dry run: " + o->hw + " not changed\n"
                               : "wrote the fitted values into " + o->hw + "\n");
    }
    return 0;
  };
}

}  // namespace gtsim::cli
