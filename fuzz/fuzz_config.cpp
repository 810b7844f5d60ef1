// Fuzz body for hardware configs: ConfigNode::load_file with `base:` and `--set`, the resolved
// config's YAML form (--resolved-config), then what `gtsim check` does with the file (cli/checkers.cpp): a
// workload (`ops:`) is loaded, a GPU config builds gpu::GpuModel (every section, unknown keys
// refused), a TPU config builds tpu::TpuConfig.
//
// Input layout (lines; the markers are YAML comments, so a plain config is a valid input):
//   the main file (main.yaml)
//   #%base            optional: what follows is base.yaml, next to main.yaml (`base: base.yaml`)
//   #%set             optional: one --set PATH=VALUE per following line
// The files go to a private temporary folder, made and removed for every input.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/tpu/tpu_config.hpp"
#include "sim/config.hpp"
#include "sim/error.hpp"
#include "sim/simulation.hpp"

namespace {
namespace fs = std::filesystem;

constexpr size_t kMaxSets = 64;

// The model-state limit this body builds machines under (the CLI's --max-memory-gib, 2 GiB by
// default). A machine the limit admits is allocated whole: at the default, an input with a 4 GiB L2
// (1.5 GiB of tags, estimated and measured) reaches 1.9 GB of RSS under ASan, and a few bytes more
// of L2 cross libFuzzer's -rss_limit_mb=2048 (finding F2, fuzz/FINDINGS.md). A quarter of a GiB keeps
// both sides of the limit reachable (every shipped config is far below it) and the process small.
constexpr double kMaxMemoryGib = 0.25;

void limit_model_memory() {
  static const bool once = [] {
    gtsim::RunLimits limits = gtsim::run_limits();
    limits.max_memory_gib = kMaxMemoryGib;
    gtsim::set_run_limits(limits);
    return true;
  }();
  (void)once;
}

struct Parts {
  std::string main, base;
  bool has_base = false;
  std::vector<std::string> sets;
};

Parts split(std::string_view in) {
  Parts p;
  enum { kMain, kBase, kSet } part = kMain;
  size_t start = 0;
  while (start < in.size()) {
    size_t nl = in.find('\n', start);
    size_t end = nl == std::string_view::npos ? in.size() : nl + 1;
    std::string_view line = in.substr(start, end - start);
    std::string_view bare = line.substr(0, line.find_last_not_of("\r\n") + 1);
    if (bare == "#%base") {
      part = kBase, p.has_base = true;
    } else if (bare == "#%set") {
      part = kSet;
    } else if (part == kMain) {
      p.main += line;
    } else if (part == kBase) {
      p.base += line;
    } else if (!bare.empty()) {
      p.sets.emplace_back(bare);
    }
    start = end;
  }
  return p;
}

// A private folder for one input's files, removed when the input is done (libFuzzer's fork mode
// ends its jobs without running atexit handlers, so nothing may outlive the input).
class WorkDir {
 public:
  WorkDir() {
    std::string tmpl = (fs::temp_directory_path() / "gtsim-fuzz-config-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("fuzz_config: cannot create a temporary folder");
    path_ = tmpl;
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.good()) throw std::runtime_error("fuzz_config: cannot write " + path.string());
}

// As cli/checkers.cpp check_config, on the loaded tree.
void check(const gtsim::ConfigNode& root, const std::string& path) {
  if (root.has("ops")) {
    gtsim::wl::Workload::load_file(path);
    return;
  }
  std::string target = root.param<std::string>("target").or_default("");
  if (target == "gpu") {
    gtsim::gpu::GpuModel model(root);
  } else if (target == "tpu") {
    gtsim::tpu::TpuConfig::from_node(root);
  } else {
    const gtsim::ConfigNode* t = root.find("target");
    (t ? *t : root).fail("expected `target: gpu` or `target: tpu`, got \"" + target + "\"");
  }
}

}  // namespace

int gtsim_fuzz_config(const uint8_t* data, size_t size) {
  if (size > gtsim::fuzz::kMaxInputBytes) return 0;
  Parts parts = split(gtsim::fuzz::as_text(data, size));
  if (parts.sets.size() > kMaxSets) return 0;
  limit_model_memory();
  WorkDir dir;
  const fs::path main = dir.path() / "main.yaml", base = dir.path() / "base.yaml";
  write(main, parts.main);
  if (parts.has_base) write(base, parts.base);
  try {
    auto root = gtsim::ConfigNode::load_file(main.string(), parts.sets);
    (void)root->to_yaml();  // --resolved-config (the CLI never serializes a config to JSON)
    check(*root, main.string());
  } catch (const gtsim::InputError& e) {
    for (const auto& d : e.diagnostics()) (void)d.str();
  } catch (const gtsim::LimitError& e) {
    (void)e.what();  // a machine above the model-state limit, refused before it is built (as `gtsim check` reports)
  }
  return 0;
}
