// gtsim run: one kernel on one machine.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/report.hpp"
#include "models/gpu/gpu_model.hpp"

namespace gtsim::cli {

namespace {
struct RunOptions {
  std::string hw, kernel, json, resolved;
  std::vector<std::string> params, sets;
  bool stats = false;
};
}  // namespace

Runner add_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  app.add_option("--hw", o->hw, "machine config (hw_configs/*.yaml)")->required();
  app.add_option("--kernel", o->kernel, "kernel in the IR (kernels_ir/lib/*.kir)")->required();
  app.add_option("--param", o->params, "kernel parameter NAME=VALUE (repeatable)");
  app.add_option("--set", o->sets, "config override PATH=VALUE, e.g. sm.count=54 (repeatable)");
  app.add_option("--json", o->json, "write the result as one JSON object to PATH ('-' = stdout, report suppressed)");
  app.add_option("--resolved-config", o->resolved, "write the fully resolved config (with git revision) to PATH");
  app.add_flag("--stats", o->stats, "include the hierarchical stats tree in the JSON");
  return [o]() {
    auto hw = load_hw(o->hw, o->sets);
    auto program = load_program(o->kernel, parse_params(o->params), hw.get());
    gpu::GpuModel model(*hw);
    gpu::KernelResult r = model.run(*program);
    nlohmann::json j = r.to_json();
    if (!o->stats) j.erase("stats");
    j["hw_file"] = o->hw;
    j["validation"] = validation_label(*hw);
    j["params"] = program->params();
    if (!o->resolved.empty()) write_output(o->resolved, resolved_config_text(*hw, o->hw));
    if (!o->json.empty()) write_output(o->json, j.dump(2) + "\n");
    if (o->json != "-") std::cout << format_run_report(j);
    return 0;
  };
}

}  // namespace gtsim::cli
