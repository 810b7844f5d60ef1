// gtsim: a thin command line over the simulator library. Subcommands parse arguments, call the
// library, and write files. Errors go to stderr with exit code 2; nothing half-written is left.
// The app and its error handling live in cli/embed.cpp, shared with the Python module.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/embed.hpp"

int main(int argc, char** argv) {
  auto cli = gtsim::cli::make_cli_app();
  try {
    cli->app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = cli->app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return gtsim::cli::run_parsed(*cli, std::cerr);
}
