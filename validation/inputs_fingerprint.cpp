#include "validation/inputs_fingerprint.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace gtsim::validation {

namespace fs = std::filesystem;

const std::vector<std::string>& fingerprint_folders() {
  static const std::vector<std::string> folders = {"sim", "models", "kernels_ir", "hw_configs", "validation"};
  return folders;
}

namespace {
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      h ^= uint8_t(p[i]);
      h *= 1099511628211ull;
    }
  }
  void add(const std::string& s) { add(s.data(), s.size() + 1); }  // the terminator separates fields
};

bool hidden(const fs::path& rel) {
  for (const auto& part : rel)
    if (!part.empty() && part.string()[0] == '.') return true;
  return false;
}
// What the page does not depend on: the CUDA twins' sources (the measurements are the data), the
// TPU model, its configs and kernels (the page validates the GPU model only), and the workload layer
// above the GPU model (the op graph and its lowering, the shipped workloads, the analytic planners of
// `waves`, `workload` and `roofline`): validate runs the IR kernels of kernels_ir/lib on models/gpu
// and never reads a workload. Nor the library batches (validation/data/library/: cuBLAS and PyTorch
// measured for `gtsim gemm`), which validate never reads.
bool not_an_input(const std::string& rel) {
  for (const char* prefix : {"validation/cuda/", "models/tpu/", "hw_configs/tpu-", "kernels_ir/lib/tpu_",
                             "kernels_ir/graph/", "kernels_ir/workloads/", "models/analytic/", "validation/data/library/"})
    if (rel.rfind(prefix, 0) == 0) return true;
  return false;
}
}  // namespace

std::string inputs_fingerprint(const fs::path& source_root) {
  std::vector<std::string> files;
  for (const std::string& folder : fingerprint_folders()) {
    fs::path dir = source_root / folder;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      fs::path rel = fs::relative(e.path(), source_root);
      if (hidden(rel) || not_an_input(rel.generic_string())) continue;
      files.push_back(rel.generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  Fnv f;
  for (const std::string& rel : files) {
    f.add(rel);
    std::ifstream in(source_root / rel, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    f.add(std::to_string(bytes.size()));
    f.add(bytes.data(), bytes.size());
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(f.h));
  return hex;
}

std::string recorded_fingerprint(const std::string& markdown) {
  const std::string key = "Inputs fingerprint: `";
  size_t i = markdown.find(key);
  if (i == std::string::npos) return "";
  i += key.size();
  size_t j = markdown.find('`', i);
  return j == std::string::npos ? "" : markdown.substr(i, j - i);
}

}  // namespace gtsim::validation
