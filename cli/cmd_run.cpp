// gtsim run: one kernel on one machine.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/html_report.hpp"
#include "cli/limits.hpp"
#include "cli/report.hpp"
#include "cli/tpu_commands.hpp"
#include "cli/trace_output.hpp"
#include "kernels_ir/ast.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/launch_history.hpp"
#include "sim/error.hpp"
#include "validation/validate.hpp"

namespace gtsim::cli {

namespace {
struct RunOptions {
  std::string hw, kernel, json, resolved, l2_start = "empty";
  std::vector<std::string> params, sets;
  bool stats = false, exact = false;
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
  app.add_flag("--exact", o->exact,
               "simulate every CTA and every loop iteration (default: sampled: steady-state loop iterations and "
               "whole turnovers of CTAs are fast-forwarded once their timing converges; docs/sampling.md)");
  app.add_option("--l2-start", o->l2_start,
                 "what the L2 holds when the launch starts: empty (a fresh machine), hot (the same launch ran "
                 "just before: simulated twice), resident (the kernel's buffers are in the L2 as that launch "
                 "would leave them, written ones dirty: not simulated, cheap), rotating (earlier launches on "
                 "other buffers filled it, their stores dirty: back-to-back launches through rotating "
                 "buffers, as a benchmark timing cold runs does)")
      ->check(CLI::IsMember({"empty", "hot", "resident", "rotating"}));
  auto limits = add_limit_options(app);
  auto trace = add_trace_options(app);
  auto html =
      add_html_option(app, "the report, where the warps waited, the bytes per level, the key figures and metrics");
  return [o, limits, trace, html]() {
    apply_limits(*limits);
    check_output_path(o->json);
    check_output_path(o->resolved);
    check_html_path(*html);
    auto timeline = check_trace_request(*trace);
    auto hw = load_hw(o->hw, o->sets);
    if (is_tpu_config(*hw)) {
      if (!html->empty())
        throw InputError(SourcePos{"<--html " + *html + ">"},
                         "--html: the run report is for GPU configs; " + o->hw + " is a TPU config (leave it out)");
      if (o->l2_start != "empty")
        throw InputError(SourcePos{o->hw}, "--l2-start: not for TPU configs (a TPU has no L2); leave it out");
      return run_tpu_kernel(*hw, {o->hw, o->kernel, o->json, "", o->params, o->sets, o->stats, trace.get()});
    }
    std::shared_ptr<const ir::Kernel> kernel;
    auto program = load_program(o->kernel, parse_params(o->params), hw.get(), &kernel);
    gpu::GpuModel model(*hw);
    model.add_source(kernel);
    gpu::SamplingPolicy sampling;
    sampling.exact = o->exact;
    model.set_sampling(sampling);
    if (timeline) model.record_timeline(*timeline);
    gpu::LaunchHistory history{gpu::parse_l2_start(o->l2_start)};
    auto run = gpu::run_after_history(model, *kernel, *program, history, gpu::config_l2_bytes(*hw));
    nlohmann::json j = run.result.to_json();
    j["l2_start"] = {{"state", o->l2_start}, {"earlier_launches", run.earlier}};
    if (!o->stats) j.erase("stats");
    j["hw_file"] = o->hw;
    j["validation"] = validation_label(*hw, validation::kernel_family(program->name()), o->sets);
    j["params"] = program->params();
    // Written only now that the simulation succeeded.
    if (!o->resolved.empty()) write_output(o->resolved, resolved_config_text(*hw, o->hw));
    write_trace(*trace, model.timeline_json());
    if (!o->json.empty()) write_output(o->json, j.dump(2) + "\n");
    if (!html->empty()) write_html(*html, run_html(j, format_run_report(j), resolved_config_text(*hw, o->hw)));
    if (o->json != "-") std::cout << format_run_report(j);
    return 0;
  };
}

}  // namespace gtsim::cli
