// The gtsim command line as a library: main.cpp and the Python module (python/) build the same CLI11
// app and run a subcommand under the same error handling (InputError, LimitError, SimulationError
// and any other exception -> message + exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace gtsim::cli {

// The app with every subcommand registered; parse it, then call run_parsed.
struct CliApp {
  CLI::App app{"gtsim: a cycle-approximate GPU/TPU architecture simulator"};
  std::string log_level = "warn";
  std::map<CLI::App*, Runner> runners;
};
std::unique_ptr<CliApp> make_cli_app();

// What stopped a command: the exception class its error came from.
enum class ErrorKind { kNone, kUsage, kInput, kLimit, kSimulation, kOther };

// Runs the parsed subcommand; an exception becomes its message on `err` and exit code 2 (`kind` says
// which, when given).
int run_parsed(CliApp& cli, std::ostream& err, ErrorKind* kind = nullptr);

struct CommandResult {
  int rc = 0;
  std::string json;    // the subcommand's --json (or, for sweep/merge, --csv) output; empty on error
  std::string error;   // what the command wrote to stderr (the diagnostics, file:line:col first)
  std::string output;  // what it wrote to std::cout (the text report)
  ErrorKind kind = ErrorKind::kNone;
};

// Runs `gtsim ARGV...` (argv without the program name, e.g. {"run", "--hw", ...}) in this process
// with `--json <tmpfile>` added (`--csv <tmpfile>` for sweep and merge; `--no-progress` for sweep),
// std::cout and std::cerr captured. Calls are serialized (the subcommands set process-wide state:
// log level, limits, the captured streams).
CommandResult run_command(const std::vector<std::string>& argv);

// The same; returns the exit code, the JSON text in `json_out` and the error text in `error`.
int run_command(const std::vector<std::string>& argv, std::string& json_out, std::string& error);

}  // namespace gtsim::cli
