#pragma once

#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"

namespace gtsim::ir::test {

inline std::string lib(const std::string& name) { return std::string(GTSIM_SOURCE_DIR) + "/kernels_ir/lib/" + name; }

inline std::shared_ptr<const Program> build_lib(const std::string& name, const ParamValues& params = {}) {
  return Program::build(*parse_kernel_file(lib(name)), params);
}

inline std::shared_ptr<const Program> build_text(const std::string& text, const ParamValues& params = {}) {
  return Program::build(*parse_kernel_string(text, "test.kir"), params);
}

inline std::vector<DynInst> run_warp(const Program& p, Dim3 cta = {0, 0, 0}, uint32_t warp = 0, size_t limit = 1 << 20) {
  std::vector<DynInst> v;
  WarpExecutor w(p, cta, warp);
  DynInst d;
  while (v.size() < limit && w.next(d)) v.push_back(d);
  return v;
}

}  // namespace gtsim::ir::test
