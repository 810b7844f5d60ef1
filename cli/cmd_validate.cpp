// gtsim validate: every measured point against the model; development-set accuracy per kernel family,
// steps, twin fidelity, Nsight Compute counters side by side, the blind config's error.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/limits.hpp"
#include "validation/calibrate.hpp"
#include "validation/inputs_fingerprint.hpp"
#include "validation/validate.hpp"

namespace gtsim::cli {

namespace {
struct ValidateOptions {
  std::string hw, data, json, doc, plot, kernels, blind, calib_json, first_shot;
  bool quick = false, sparse = false, no_blind = false, write_bands = false;
  unsigned threads = 0;
  std::vector<std::string> families, sets;
};
}  // namespace

namespace {
// The first line a shell command prints ("" when it fails).
std::string first_line_of(const std::string& cmd) {
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, f)) out = buf;
    ::pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Where a first-shot record comes from: the commit the model was built from (the data folder's git
// checkout), whether tracked files differed from it, the date and the command.
nlohmann::json provenance(const std::string& data, const std::string& hw, const std::string& batch) {
  std::string git = "git -C " + shell_quote(data) + " ";
  std::string commit = first_line_of(git + "rev-parse HEAD 2>/dev/null");
  std::string dirty = first_line_of(git + "status --porcelain --untracked-files=no 2>/dev/null");
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"commit", commit.empty() ? "unknown (not a git checkout)" : commit},
          {"tracked_files_modified", !dirty.empty()},
          {"date_utc", date},
          {"command", "gtsim validate --hw " + hw + " --data " + data + " --first-shot " + batch}};
}
}  // namespace

// validation.family_error.NAME.pct.FAMILY of `hw`, where the config has that key (a family it lacks is said).
static void write_family_band(const std::string& hw, const std::string& name, const std::string& family, double mape,
                              bool say) {
  if (!std::isfinite(mape)) return;
  try {
    validation::edit_config_file(hw, {{"validation.family_error." + name + ".pct." + family, validation::fmt(mape, 3),
                                       "development set, docs/validation.md"}});
  } catch (const InputError&) {
    if (say)
      std::cout << "family error of " << family << " not written: " << hw << " has no validation.family_error." << name
                << ".pct." << family << "\n";
  }
}

Runner add_validate(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  app.add_option("--hw", o->hw, "calibrated GPU config (e.g. hw_configs/h200-sxm.yaml)")->required();
  app.add_option("--data", o->data, "measured data folder (e.g. validation/data/h200)")->required();
  app.add_option("--json", o->json, "write the report as JSON to PATH ('-' = stdout)");
  app.add_option("--out-doc", o->doc, "write the Markdown report (docs/validation.md)");
  app.add_option("--plot", o->plot, "write the simulated-vs-measured scatter plot PNG (needs gnuplot)");
  app.add_option("--kernels", o->kernels, "IR kernel library (default: kernels_ir/lib found from --data)");
  app.add_option("--blind", o->blind, "blind config (default: h200-blind.yaml beside --hw)");
  app.add_option("--calibration-json", o->calib_json, "include this `gtsim calibrate --json` output in the document");
  app.add_option("--threads", o->threads, "simulation threads (default: all cores)");
  app.add_option("--families", o->families,
                 "simulate only these families (e.g. gemm_fp32,gemm_tiled); the others are listed as not simulated")
      ->delimiter(',');
  app.add_option("--set", o->sets,
                 "config override PATH=VALUE for the run (repeatable), e.g. sm.shared.latency_cycles=28");
  app.add_option("--first-shot", o->first_shot,
                 "record the model's prediction of batch BATCH (its points only, the blind config too) in "
                 "DATA/BATCH/first_shot.csv and first_shot.json, once: run it right after committing the batch, "
                 "before any model change that looks at it")
      ->type_name("BATCH");
  app.add_flag("--no-blind", o->no_blind, "skip the blind config");
  app.add_flag("--quick", o->quick, "fewer, smaller model runs (tests)");
  app.add_flag("--sparse", o->sparse,
               "fewer points of the long GEMM and flash attention sweeps (as the CI accuracy test)");
  app.add_flag(
      "--write-error-bands", o->write_bands,
      "write the development-set MAPE into --hw's validation.error_band_pct and the blind MAPE into the A100 and "
      "H100 configs");
  auto limits = add_limit_options(app);
  return [o, limits]() {
    namespace fs = std::filesystem;
    apply_limits(*limits);
    for (const std::string* p : {&o->json, &o->doc, &o->plot}) check_output_path(*p);
    if (o->write_bands && (!o->families.empty() || !o->sets.empty() || o->sparse || o->quick))
      throw InputError(SourcePos{"--write-error-bands"},
                       "writes the error band of the whole validation of the config as written, expected no "
                       "--families, --set, --sparse or --quick beside it");
    if (!o->first_shot.empty() &&
        (!o->families.empty() || !o->sets.empty() || o->sparse || o->quick || !o->doc.empty() || o->write_bands))
      throw InputError(SourcePos{"--first-shot"},
                       "records the prediction of the config as written for every point of the batch, expected no "
                       "--families, --set, --sparse, --quick, --out-doc or --write-error-bands beside it");
    auto data = validation::load_dataset(o->data);
    nlohmann::json origin;  // taken before the run: the commit the record's model comes from
    if (!o->first_shot.empty()) {
      data = validation::only_batch(data, o->first_shot);
      origin = provenance(o->data, o->hw, o->first_shot);
    }
    // the inputs the document is written from, taken before the run (its folder's parent is the tree)
    std::string fingerprint =
        o->doc.empty() ? "" : validation::inputs_fingerprint(fs::absolute(o->doc).parent_path().parent_path());
    std::string kdir = o->kernels.empty() ? validation::find_kernels_dir(o->data) : o->kernels;
    validation::ValidationOptions opt;
    opt.quick = o->quick;
    opt.sparse = o->sparse;
    opt.threads = o->threads;
    opt.blind = !o->no_blind;
    opt.blind_hw = o->blind;
    opt.families = o->families;
    opt.calibration_overrides = o->sets;
    opt.complete = !o->first_shot.empty();  // a record of every point the model can run, not a sample
    auto rep = validation::validate(o->hw, data, kdir, opt);
    nlohmann::json j = rep.to_json();
    nlohmann::json cal;
    if (!o->calib_json.empty()) {
      std::ifstream in(o->calib_json);
      if (in) cal = nlohmann::json::parse(in, nullptr, false);
    }
    if (!o->plot.empty()) {
      std::string msg;
      validation::write_scatter_plot(rep, o->plot, msg);
      j["plot"] = msg;
      if (o->json != "-") std::cout << msg << "\n";
    }
    if (!o->first_shot.empty()) {
      validation::write_first_shot(rep, o->data, o->first_shot, origin);
      std::cout << "first-shot record written: " << (fs::path(o->data) / o->first_shot / "first_shot.csv").string()
                << "\n";
    }
    if (o->write_bands) {
      // per family (validation.family_error.NAME.pct.FAMILY, the keys the config has): what `gtsim run` prints
      auto hw_root = ConfigNode::load_file(o->hw);
      std::string name = hw_root->param<std::string>("name").or_default("");
      for (const auto& f : rep.heldout_families) write_family_band(o->hw, name, f.name, f.mape, o->json != "-");
      for (const auto& f : rep.fitbench_families) write_family_band(o->hw, name, f.name, f.mape, o->json != "-");
      fs::path dir = fs::path(o->hw).parent_path();
      if (std::isfinite(rep.heldout_mape))
        validation::write_error_band(
            o->hw, rep.heldout_mape,
            "development-set MAPE on the H200 (" + rep.heldout_kind + "), gtsim validate; docs/validation.md");
      if (rep.blind_ran && std::isfinite(rep.blind_mape))
        for (const char* f : {"a100-40gb.yaml", "a100-80gb.yaml", "h100-sxm.yaml"})
          if (fs::exists(dir / f)) {
            try {
              validation::write_error_band((dir / f).string(), rep.blind_mape,
                                           "blind-config MAPE on the H200 development set (h200-blind.yaml, never "
                                           "fitted to it), gtsim validate; docs/validation.md");
            } catch (const std::exception& e) {  // inherited through base: (a100-80gb from a100-40gb)
              if (o->json != "-") std::cout << "error band not written into " << f << ": " << e.what() << "\n";
            }
          }
    }
    if (!o->doc.empty()) {
      // the bands just written are part of the tree the page describes: fingerprint it again
      if (o->write_bands)
        fingerprint = validation::inputs_fingerprint(fs::absolute(o->doc).parent_path().parent_path());
      std::string png = o->plot.empty() ? "" : fs::relative(o->plot, fs::path(o->doc).parent_path()).string();
      write_output(o->doc, validation::validation_markdown(rep, cal, png, fingerprint));
    }
    // with --out-doc, the JSON records the inputs it was written from as the page does, so that a test
    // can read the page's figures and know they are the current model's (scripts/validation_page.sh)
    if (!fingerprint.empty()) j["inputs_fingerprint"] = fingerprint;
    if (!o->json.empty()) write_output(o->json, j.dump(1) + "\n");
    if (o->json != "-") std::cout << rep.summary();
    std::cerr << "validate: " << rep.model_runs << " model runs, " << std::lround(rep.sim_seconds)
              << " s of simulation (all threads); slowest:\n";
    for (const auto& [secs, key] : rep.slowest_runs) std::cerr << "  " << std::lround(secs) << " s  " << key << "\n";
    return 0;
  };
}

}  // namespace gtsim::cli
