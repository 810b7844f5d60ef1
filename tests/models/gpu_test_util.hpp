// Helpers for the GPU model tests: load a shipped config and a shipped or inline kernel, run it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "models/gpu/gpu_model.hpp"
#include "sim/config.hpp"

namespace gtsim::gpu::testing {

inline std::string source_path(const std::string& rel) { return std::string(GTSIM_SOURCE_DIR) + "/" + rel; }

inline std::shared_ptr<ConfigNode> load_hw(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return ConfigNode::load_file(source_path("hw_configs/" + name + ".yaml"), overrides);
}

inline std::shared_ptr<const ir::Program> lib_kernel(const std::string& name, const ir::ParamValues& params = {}) {
  auto k = ir::parse_kernel_file(source_path("kernels_ir/lib/" + name + ".kir"));
  return ir::Program::build(*k, params);
}

inline std::shared_ptr<const ir::Program> inline_kernel(const std::string& text, const ir::ParamValues& params = {}) {
  auto k = ir::parse_kernel_string(text, "<test>");
  return ir::Program::build(*k, params);
}

// One kernel on a fresh machine.
inline KernelResult run_one(const std::string& hw, const ir::Program& p, const std::vector<std::string>& overrides = {}) {
  auto root = load_hw(hw, overrides);
  GpuModel model(*root);
  return model.run(p);
}

}  // namespace gtsim::gpu::testing
