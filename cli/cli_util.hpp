// Helpers shared by the gtsim subcommands: argument parsing of NAME=VALUE lists, atomic output
// (nothing half-written), and loading of kernels and configs.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "sim/config.hpp"
#include "sim/output_file.hpp"

namespace gtsim::ir {
struct Kernel;
}

namespace gtsim::cli {

// Parses "NAME=VALUE" integer parameters; throws InputError naming the bad argument.
ir::ParamValues parse_params(const std::vector<std::string>& args);

using gtsim::check_output_path;  // sim/output_file.hpp
using gtsim::write_output;

// InputError naming the kernel's parameters when `params` sets one the kernel does not declare.
void check_known_params(const std::string& kernel_path, const ir::Kernel& kernel, const ir::ParamValues& params);

// Loads a machine config with --set overrides.
std::shared_ptr<ConfigNode> load_hw(const std::string& path, const std::vector<std::string>& sets);

// Parses, verifies (against the machine's limits when `hw` is given) and binds a kernel; the parsed
// kernel goes to `parsed` when given (to bind it again elsewhere, e.g. at other buffer addresses).
std::shared_ptr<const ir::Program> load_program(const std::string& kernel_path, const ir::ParamValues& params,
                                                const ConfigNode* hw,
                                                std::shared_ptr<const ir::Kernel>* parsed = nullptr);

// The config's validation section: its status, its overall error band and, for a kernel `family`
// (validation::kernel_family), that family's own error (validation.family_error_pct; null when the
// family has no measured point on this config).
// `sets`: the --set overrides the config was loaded with. One that changes anything but the
// validation section makes another machine than the one validated: its label says "derived" and
// carries no error figure.
nlohmann::json validation_label(const ConfigNode& hw, const std::string& family = "",
                                const std::vector<std::string>& sets = {});

// The same for a kernel already parsed (a sweep parses once and binds every point).
std::shared_ptr<const ir::Program> load_program(const std::string& kernel_path, const ir::ParamValues& params,
                                                const ConfigNode* hw, std::shared_ptr<const ir::Kernel>* parsed,
                                                std::shared_ptr<const ir::Kernel> kernel);

std::string git_revision();

}  // namespace gtsim::cli
