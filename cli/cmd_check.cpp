// gtsim check: validates configs, kernels and workloads; one `file:line:col: message` per problem.
#include <iostream>

#include "cli/checkers.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

Runner add_check(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  app.add_option("files", *files, "configs (*.yaml), kernels (*.kir) and workloads (*.yaml with ops)")->required();
  return [files]() {
    size_t bad = 0;
    for (const auto& f : *files) {
      try {
        check_file(f);
      } catch (const InputError& e) {
        ++bad;
        for (const auto& d : e.diagnostics()) std::cerr << d.str() << "\n";
      } catch (const std::exception& e) {
        ++bad;
        std::cerr << f << ": " << e.what() << "\n";
      }
    }
    if (bad) {
      std::cerr << "gtsim check: " << bad << " of " << files->size() << " files have problems\n";
      return 2;
    }
    std::cout << "gtsim check: " << files->size() << " files OK\n";
    return 0;
  };
}

}  // namespace gtsim::cli
