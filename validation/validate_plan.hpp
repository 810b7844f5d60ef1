// Internal to gtsim validate (validate.cpp): how a measured point becomes model runs. The IR kernels
// that model an application point (app_mapping), and the plans that simulate a point: its jobs, scaled
// down where the real run is long, and the function that combines their times (extrapolated linearly
// back to the measured size). Not part of the library's interface.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "validation/measured.hpp"
#include "validation/simrun.hpp"

namespace gtsim::validation::detail {

// The jobs of one measured point and how their times combine into the compared quantity.
struct Plan {
  std::vector<SimJob> jobs;
  std::function<double(const std::vector<SimOutcome>&)> combine;
  std::string note;
  int launches = 1;  // kernels launched per measured time (each pays launch.stream_gap_us when stream-timed)
};

// ---- application kernels: the IR kernels that model a measured point, in launch order ----
struct AppKernel {
  std::string kir;  // kernels_ir/lib/NAME.kir
  ir::ParamValues params;
  std::string twin_function;  // part of the twin's mangled name (its fidelity record)
};
struct AppMapping {
  std::vector<AppKernel> kernels;  // empty: not modelled (reason says why)
  std::string reason;
  std::string scale_param;  // "n": streaming kernels, time linear in n (extrapolated); "K": GEMM k-loop
  int64_t kstep = 256;      // "K": 8 k-tiles (BK 32: 256; gemm_fp32's BK 8: 64)
};

inline int64_t cdiv_i(int64_t a, int64_t b) { return (a + b - 1) / b; }

AppMapping app_mapping(const MeasuredPoint& p, SimRunner& sim);

// An application point: its kernels launched back to back, each one's time (launch overhead +
// execution) summed, as the runner timed them (per repeat of all of its launches); long kernels run
// scaled down (l2_bytes: the config's L2, shrunk 8x for the streaming ones) and are extrapolated
// linearly.
Plan app_plan(const MeasuredPoint& p, const AppMapping& am, double l2_bytes);

// Microbenchmarks whose time is linear in a loop-trip parameter: run at two small values of it and
// extrapolated (said in the note). scaled_plan builds that plan from the point's bound parameters.
bool has_scaled_plan(const std::string& kernel);
Plan scaled_plan(const MeasuredPoint& p, ir::ParamValues params);

}  // namespace gtsim::validation::detail
