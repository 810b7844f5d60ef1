#include "validation/simrun.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/parser.hpp"
#include "sim/config.hpp"
#include "sim/data_dir.hpp"
#include "sim/error.hpp"

namespace gtsim::validation {
namespace fs = std::filesystem;

std::string find_kernels_dir(const std::string& start) {
  auto search = [](fs::path p) -> std::string {
    std::error_code ec;
    p = fs::absolute(p, ec);
    for (; !p.empty(); p = p.parent_path()) {
      if (fs::is_directory(p / "kernels_ir" / "lib")) return (p / "kernels_ir" / "lib").string();
      if (p == p.parent_path()) break;
    }
    return "";
  };
  std::string data;  // gtsim's data folder (sim/data_dir.hpp), last
  try {
    data = data_dir();
  } catch (const InputError&) {
  }
  for (const std::string& s : {start, fs::current_path().string(), data}) {
    if (s.empty()) continue;
    std::string d = search(s);
    if (!d.empty()) return d;
  }
  return "";
}

SimRunner::SimRunner(std::string hw_path, std::string kernels_dir, std::vector<std::string> base_sets)
    : hw_(std::move(hw_path)), kdir_(std::move(kernels_dir)), base_sets_(std::move(base_sets)) {
  threads_ = std::max(1u, std::thread::hardware_concurrency());
  if (kdir_.empty() || !fs::is_directory(kdir_))
    throw InputError(SourcePos{kdir_.empty() ? "kernels_ir/lib" : kdir_},
                     "kernel library folder not found (--kernels)");
  ConfigNode::load_file(hw_, base_sets_);  // fail early on a bad config
}

SimRunner::~SimRunner() = default;

bool SimRunner::has_kernel(const std::string& kernel) const { return fs::exists(fs::path(kdir_) / (kernel + ".kir")); }

std::string SimRunner::kernel_path(const std::string& kernel) const {
  return (fs::path(kdir_) / (kernel + ".kir")).string();
}

std::shared_ptr<const ir::Kernel> SimRunner::parsed(const std::string& kernel) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kernels_.find(kernel);
  if (it != kernels_.end()) return it->second;
  std::string path = (fs::path(kdir_) / (kernel + ".kir")).string();
  if (!fs::exists(path)) throw InputError(SourcePos{path}, "no such kernel in the library");
  std::shared_ptr<const ir::Kernel> k = ir::parse_kernel_file(path);
  kernels_[kernel] = k;
  return k;
}

std::vector<std::string> SimRunner::kernel_params(const std::string& kernel) {
  std::vector<std::string> out;
  for (const auto& p : parsed(kernel)->params) out.push_back(p.name);
  return out;
}

namespace {
std::string key_of(const std::string& kernel, const ir::ParamValues& params) {
  std::string k = kernel;
  for (const auto& [n, v] : params) k += ";" + n + "=" + std::to_string(v);
  return k;
}
}  // namespace

std::shared_ptr<const ir::Program> SimRunner::program_for(const std::string& kernel, const ir::ParamValues& params) {
  auto k = parsed(kernel);
  std::string key = key_of(kernel, params);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = programs_.find(key);
    if (it != programs_.end()) return it->second;
  }
  auto prog = ir::Program::build(*k, params);
  std::lock_guard<std::mutex> lock(mu_);
  programs_[key] = prog;
  return prog;
}

SimOutcome SimRunner::run(const SimJob& job) {
  std::string key = key_of(job.kernel, job.params) + "|" + gpu::l2_start_name(job.history.start) + "/" +
                    std::to_string(job.history.slots) + (exact_ ? "|exact" : "");
  for (const auto& s : job.sets) key += "|" + s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
  }
  SimOutcome out;
  auto t0 = std::chrono::steady_clock::now();
  try {
    std::vector<std::string> sets = base_sets_;
    sets.insert(sets.end(), job.sets.begin(), job.sets.end());
    auto root = ConfigNode::load_file(hw_, sets);
    auto prog = program_for(job.kernel, job.params);
    gpu::GpuModel model(*root);
    gpu::SamplingPolicy policy;
    policy.exact = exact_;
    model.set_sampling(policy);
    out.result =
        gpu::run_after_history(model, *parsed(job.kernel), *prog, job.history, gpu::config_l2_bytes(*root)).result;
    out.ok = true;
  } catch (const InputError& e) {
    out.error = e.what();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::debug("model run {:.1f} s ({} warp instructions, {:.0f}% simulated): {}", secs, out.result.warp_instructions,
                100 * out.result.sampling.fraction_simulated, key);
  std::lock_guard<std::mutex> lock(mu_);
  ++runs_;
  sim_seconds_ += secs;
  timings_.push_back({secs, key});
  memo_[key] = out;
  return out;
}

std::vector<std::pair<double, std::string>> SimRunner::slowest(size_t n) const {
  auto v = timings_;
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (v.size() > n) v.resize(n);
  return v;
}

std::vector<SimOutcome> SimRunner::run_all(const std::vector<SimJob>& jobs) {
  std::vector<SimOutcome> out(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < jobs.size(); i = next++) out[i] = run(jobs[i]);
  };
  std::vector<std::thread> pool;
  unsigned n = std::min<unsigned>(threads_, unsigned(jobs.size()));
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace gtsim::validation
