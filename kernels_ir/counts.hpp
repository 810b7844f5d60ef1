// Static (per loop body) and dynamic (whole kernel, all warps) instruction counts per class.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"

namespace gtsim::ir {

using ClassCounts = std::array<uint64_t, size_t(OpClass::kCount)>;

struct InstructionCounts {
  struct Body {
    std::string where;        // "kernel" or "loop at file:line" (innermost loop of the instructions)
    ClassCounts per_class{};  // every static instruction of the body, its loop control included
    ClassCounts control{};    // the loop's control instructions among them (iadd + setp: int, bra: branch)
    uint32_t unroll = 0;      // iterations per control group (docs/ir.md "Loop control"); 0: none (fully unrolled)
  };
  std::vector<Body> static_bodies;  // static instructions directly in each loop body (kernel top level first)
  ClassCounts dynamic{};            // warp instructions over all warps of the grid
  uint64_t dynamic_total = 0, flops = 0, warps = 0;
  nlohmann::json to_json() const;
};

// Exact: executes every warp of the grid.
InstructionCounts count_instructions(const Program& p);

}  // namespace gtsim::ir
