// Graph rewrites over a Workload. Each pass returns what it did; the workload stays a checked DAG.
#pragma once

#include <string>
#include <vector>

#include "kernels_ir/graph/workload.hpp"

namespace gtsim::wl {

struct PassReport {
  std::string pass;
  size_t ops_before = 0, ops_after = 0;
  std::vector<std::string> notes;  // one line per rewrite ("fused sin,cos,pow,pow,add -> fused0")
};

// P6: recompute-or-store. For every backward op reading a tensor produced by a forward
// elementwise op marked `recompute` (and not a workload output), the read is replaced by a
// clone of the producing chain in the backward phase, so the forward no longer stores it.
PassReport recompute_activations(Workload& w);

// P5: elementwise fusion. Connected elementwise ops of the same phase and element count merge
// into one kElementwise op whose expression tree is the composition; a tensor produced inside
// the group is written only when something outside the group (or the user) reads it.
PassReport fuse_elementwise(Workload& w);

struct PassOptions {
  bool fusion = true;
  bool recompute = true;  // honour the ops' `recompute:` policy
};
// Runs recompute_activations (if enabled) then fuse_elementwise (if enabled).
std::vector<PassReport> run_passes(Workload& w, const PassOptions& opt);

}  // namespace gtsim::wl
