// gtsim subcommands. Each registers its options on a CLI11 app and returns a runner that the
// main function calls inside its error handler (InputError / SimulationError -> exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace gtsim::cli {

using Runner = std::function<int()>;

Runner add_run(CLI::App& app);
Runner add_check(CLI::App& app);
Runner add_trace(CLI::App& app);
Runner add_waves(CLI::App& app);
Runner add_gemm(CLI::App& app);
Runner add_workload(CLI::App& app);
Runner add_compare(CLI::App& app);
Runner add_roofline(CLI::App& app);
Runner add_calibrate(CLI::App& app);
Runner add_validate(CLI::App& app);
Runner add_sweep(CLI::App& app);
Runner add_merge(CLI::App& app);

}  // namespace gtsim::cli
