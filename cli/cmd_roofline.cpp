// gtsim roofline: the attained ridge point per dtype from the model's own stream and MMA
// microbenchmarks, and (with --workload) each kernel's place under the roof (P2).
#include <iostream>
#include <optional>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/limits.hpp"
#include "cli/plot.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "models/analytic/roofline.hpp"

namespace gtsim::cli {

Runner add_roofline(CLI::App& app) {
  struct Opts {
    std::string hw, workload, json, plot;
    std::vector<std::string> sets, params;
    analytic::RooflineOptions ro;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("--hw", o->hw, "machine config")->required();
  app.add_option("--workload", o->workload, "workload YAML: place each of its kernels under the roof");
  app.add_option("--param", o->params, "workload param override NAME=VALUE (repeatable)");
  app.add_option("--set", o->sets, "config override PATH=VALUE");
  app.add_flag("--exact", o->ro.run.exact, "workload kernels without sampling");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  app.add_option("--plot", o->plot,
                 "draw the ceilings and each kernel to PATH.svg or PATH.png (gnuplot; data and script beside it)");
  auto limits = add_limit_options(app);
  return [o, limits]() {
    apply_limits(*limits);
    check_output_path(o->json);
    check_plot_path(o->plot);
    auto hw = load_hw(o->hw, o->sets);
    std::optional<wl::Workload> w;
    if (!o->workload.empty()) w = wl::Workload::load_file(o->workload, wl::parse_param_overrides(o->params));
    auto r = analytic::roofline(*hw, w ? &*w : nullptr, o->ro);
    r.json["validation"] = validation_label(*hw, "", o->sets);
    if (!o->json.empty()) write_output(o->json, r.json.dump(2) + "\n");
    if (!o->plot.empty()) {
      std::string machine = hw->find("name") ? hw->at("name").scalar() : o->hw;
      std::string what = w ? ": " + o->workload.substr(o->workload.find_last_of('/') + 1) : std::string();
      write_roofline_plot(o->plot, r, "gtsim roofline: " + machine + what);
    }
    if (o->json != "-") std::cout << r.text;
    return 0;
  };
}

}  // namespace gtsim::cli
