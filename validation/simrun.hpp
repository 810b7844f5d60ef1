// Runs IR kernels on the GPU model for calibration and validation: a config file plus --set style
// overrides, kernels from kernels_ir/lib by name, results memoized per (kernel, params, overrides),
// and batches run on several threads (each run builds its own Simulation, so runs are independent).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/launch_history.hpp"

namespace gtsim::ir {
struct Kernel;
}

namespace gtsim::validation {

struct SimJob {
  std::string kernel;  // name in kernels_ir/lib (without .kir)
  ir::ParamValues params;
  std::vector<std::string> sets;  // config overrides "a.b=value"
  gpu::LaunchHistory history{};   // what the L2 holds when the reported launch starts: empty, hot (the
                                  // twin's "hot": the same launch before it) or rotating (its "cold":
                                  // launches through rotating buffer pools, models/gpu/launch_history.hpp)
};

struct SimOutcome {
  bool ok = false;
  std::string error;
  gpu::KernelResult result;
};

class SimRunner {
 public:
  SimRunner(std::string hw_path, std::string kernels_dir, std::vector<std::string> base_sets = {});
  ~SimRunner();

  // Parameter names of a library kernel (throws InputError when the kernel does not exist).
  std::vector<std::string> kernel_params(const std::string& kernel);
  bool has_kernel(const std::string& kernel) const;
  std::string kernel_path(const std::string& kernel) const;  // kernels_ir/lib/NAME.kir

  // The bound program (cached; shareable across threads).
  std::shared_ptr<const ir::Program> program_for(const std::string& kernel, const ir::ParamValues& params);
  SimOutcome run(const SimJob& job);
  std::vector<SimOutcome> run_all(const std::vector<SimJob>& jobs);  // in parallel, results in order

  void set_threads(unsigned n) { threads_ = n ? n : 1; }
  // Every launch simulated in full (no sampling, docs/sampling.md): calibration fits slopes between
  // short runs, where a sampled run's small error would be multiplied by the extrapolation.
  void set_exact(bool exact) { exact_ = exact; }
  const std::string& hw_path() const { return hw_; }
  size_t runs() const { return runs_; }
  double sim_seconds() const { return sim_seconds_; }
  // the n slowest model runs so far, slowest first: (seconds of host time, the run's key)
  std::vector<std::pair<double, std::string>> slowest(size_t n) const;

 private:
  std::shared_ptr<const ir::Kernel> parsed(const std::string& kernel);
  std::string hw_, kdir_;
  std::vector<std::string> base_sets_;
  unsigned threads_;
  bool exact_ = false;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const ir::Kernel>> kernels_;
  std::map<std::string, std::shared_ptr<const ir::Program>> programs_;
  std::map<std::string, SimOutcome> memo_;
  size_t runs_ = 0;
  double sim_seconds_ = 0;
  std::vector<std::pair<double, std::string>> timings_;
};

// kernels_ir/lib of the source tree: searched upwards from `start` (a file or folder), then from
// the working folder, then gtsim's data folder (sim/data_dir.hpp: $GTSIM_DATA, the installed
// share/gtsim, the tree this binary was built from). Empty when not found.
std::string find_kernels_dir(const std::string& start);

}  // namespace gtsim::validation
