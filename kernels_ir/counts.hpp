// Static (per loop body) and dynamic (whole kernel, all warps) instruction counts per class.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels_ir/exec/program.hpp"

namespace gtsim::ir {

using ClassCounts = std::array<uint64_t, size_t(OpClass::kCount)>;

struct InstructionCounts {
  struct Body {
    std::string where;      // "kernel" or "loop VAR at file:line:col" (innermost loop of the instructions)
    ClassCounts per_class{};
  };
  std::vector<Body> static_bodies;  // static instructions directly in each loop body (kernel top level first)
  ClassCounts dynamic{};            // warp instructions over all warps of the grid
  uint64_t dynamic_total = 0, flops = 0, warps = 0;
  nlohmann::json to_json() const;
};

// Exact: executes every warp of the grid.
InstructionCounts count_instructions(const Program& p);

}  // namespace gtsim::ir
