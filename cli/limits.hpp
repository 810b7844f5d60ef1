// The resource limits every simulating subcommand takes (--max-sim-seconds, --max-events,
// --max-host-seconds, --max-memory-gib, --max-warp-instructions), registered in one place so that
// their names, defaults and help are the same everywhere (sim/simulation.hpp RunLimits).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "sim/simulation.hpp"

namespace gtsim::cli {

// Registers the limit flags on `app` (in a "Limits" group of its --help) and returns where their
// values go; call apply_limits with it before the first simulation.
std::shared_ptr<RunLimits> add_limit_options(CLI::App& app);
// Installs the limits for every simulation of this process (the host-time clock starts now).
void apply_limits(const RunLimits& limits);

}  // namespace gtsim::cli
