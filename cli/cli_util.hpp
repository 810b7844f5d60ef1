// Helpers shared by the gtsim subcommands: argument parsing of NAME=VALUE lists, atomic output
// (nothing half-written), and loading of kernels and configs.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "sim/config.hpp"

namespace gtsim::ir {
struct Kernel;
}

namespace gtsim::cli {

// Parses "NAME=VALUE" integer parameters; throws InputError naming the bad argument.
ir::ParamValues parse_params(const std::vector<std::string>& args);

// Writes `text` to `path` ("-" = stdout). A regular file (or a new one) is written through a
// temporary file beside it, renamed over it only when complete (symbolic links are followed: the
// file they name is replaced, not the link); a character device, FIFO or socket (/dev/null,
// /dev/stdout, a pipe) is written in place, never replaced; a directory is refused. The temporary
// file never outlives a failure. Errors (InputError) name the path and the reason.
void write_output(const std::string& path, const std::string& text);

// Before any work: refuses an output path that write_output would refuse for its kind or folder
// (a directory, a folder that does not exist), so a long run does not end in that error. "" and
// "-" pass.
void check_output_path(const std::string& path);

// Loads a machine config with --set overrides.
std::shared_ptr<ConfigNode> load_hw(const std::string& path, const std::vector<std::string>& sets);

// Parses, verifies (against the machine's limits when `hw` is given) and binds a kernel; the parsed
// kernel goes to `parsed` when given (to bind it again elsewhere, e.g. at other buffer addresses).
std::shared_ptr<const ir::Program> load_program(const std::string& kernel_path, const ir::ParamValues& params,
                                                const ConfigNode* hw,
                                                std::shared_ptr<const ir::Kernel>* parsed = nullptr);

// "status (error band)" label of a config's validation section, e.g. "calibrated, held-out MAPE 7.9%".
nlohmann::json validation_label(const ConfigNode& hw);

// The same for a kernel already parsed (a sweep parses once and binds every point).
std::shared_ptr<const ir::Program> load_program(const std::string& kernel_path, const ir::ParamValues& params,
                                                const ConfigNode* hw, std::shared_ptr<const ir::Kernel>* parsed,
                                                std::shared_ptr<const ir::Kernel> kernel);

std::string git_revision();

}  // namespace gtsim::cli
