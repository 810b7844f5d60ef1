#include "cli/limits.hpp"

namespace gtsim::cli {

std::shared_ptr<RunLimits> add_limit_options(CLI::App& app) {
  auto l = std::make_shared<RunLimits>();
  CLI::Option_group* g = app.add_option_group(
      "Limits", "a run that reaches one stops with exit code 2, names the limit and writes nothing");
  g->add_option("--max-sim-seconds", l->max_sim_seconds, "simulated seconds one machine may run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  g->add_option_function<double>(
       "--max-events", [l](double v) { l->max_events = v >= 1.8e19 ? UINT64_MAX : uint64_t(v); },
       "simulation events one machine may process (default 2e10)")
      ->check(CLI::PositiveNumber);
  g->add_option("--max-host-seconds", l->max_host_seconds,
                "host (wall-clock) seconds the simulations of this command may take; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  g->add_option("--max-memory-gib", l->max_memory_gib,
                "host memory one machine's model state may take, estimated before the run (cache tags, warp "
                "state of the resident CTAs, pointer-chase chains)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  g->add_option("--max-warp-instructions", l->max_warp_instructions,
                "dynamic warp instructions one launch may have, estimated before the run (the whole launch, "
                "as --exact simulates it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return l;
}

void apply_limits(const RunLimits& limits) { set_run_limits(limits); }

}  // namespace gtsim::cli
