// gtsim: a thin command line over the simulator library. Subcommands parse arguments, call the
// library, and write files. Errors go to stderr with exit code 2; nothing half-written is left.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <map>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "sim/error.hpp"
#include "sim/simulation.hpp"

int main(int argc, char** argv) {
  using namespace gtsim;
  CLI::App app{"gtsim: a cycle-approximate GPU/TPU architecture simulator"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gtsim ") + GTSIM_VERSION + " (" + cli::git_revision() + ")");
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error|off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

  std::map<CLI::App*, cli::Runner> runners;
  auto reg = [&](const char* name, const char* desc, cli::Runner (*add)(CLI::App&)) {
    CLI::App* sub = app.add_subcommand(name, desc);
    runners[sub] = add(*sub);
  };
  reg("run", "simulate one kernel on one machine and report time, waves, bytes and where the time went", cli::add_run);
  reg("check", "validate machine configs, kernels and workloads (exit 0 when all are good, 2 otherwise)",
      cli::add_check);
  reg("trace", "print one warp's dynamic instructions with masks, addresses, sectors, lines and bank wavefronts",
      cli::add_trace);
  reg("waves", "tiles, waves, tile efficiency and alignment of a GEMM shape, with padded alternatives", cli::add_waves);
  reg("workload", "run a workload's kernels in order: time and share per kernel, bytes, FLOPs, bound",
      cli::add_workload);
  reg("compare", "the same workload on several machines (GPU and TPU configs) side by side", cli::add_compare);
  reg("roofline", "attained ridge point per dtype from the model's own microbenchmarks, and each kernel's place (P2)",
      cli::add_roofline);
  reg("calibrate", "fit a GPU config's calibrated parameters from measured microbenchmarks, through the model",
      cli::add_calibrate);
  reg("sweep",
      "one kernel or workload over a grid of parameters on threads, shards (--shard I/N) or MPI ranks: a CSV "
      "row per point",
      cli::add_sweep);
  reg("merge", "join the shard files of gtsim sweep --shard I/N into the CSV one sweep writes", cli::add_merge);
  reg("validate", "compare the model with every measured point: development-set and first-shot accuracy per family, steps, twin fidelity",
      cli::add_validate);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  spdlog::set_level(spdlog::level::from_str(log_level));
  for (auto& [sub, run] : runners) {
    if (!sub->parsed()) continue;
    try {
      return run();
    } catch (const InputError& e) {
      for (const auto& d : e.diagnostics()) std::cerr << d.str() << "\n";
      return 2;
    } catch (const LimitError& e) {
      std::cerr << "gtsim " << sub->get_name() << ": " << e.what() << "\n";
      return 2;
    } catch (const SimulationError& e) {
      std::cerr << "gtsim " << sub->get_name() << ": simulation stopped: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "gtsim " << sub->get_name() << ": error: " << e.what() << "\n";
      return 2;
    }
  }
  return 2;
}
