#include "cli/checkers.hpp"

#include <filesystem>

#include "cli/cli_util.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "kernels_ir/parser.hpp"
#include "kernels_ir/verifier.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/tpu/tpu_config.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace {

void check_kernel(const std::string& path) {
  auto kernel = ir::parse_kernel_file(path);
  auto diags = ir::verify(*kernel);
  if (!diags.empty()) throw InputError(std::move(diags));
}

void check_config(const std::string& path) {
  auto root = load_hw(path, {});
  if (root->has("ops")) {
    wl::Workload::load_file(path);  // shapes, dtypes, expressions, dependencies, acyclic
    return;
  }
  std::string target = root->param<std::string>("target").or_default("");
  if (target == "gpu") {
    gpu::GpuModel model(*root);  // parses every section and refuses unknown keys
  } else if (target == "tpu") {
    tpu::TpuConfig::from_node(*root);  // likewise for the TPU's sections
  } else {
    const ConfigNode* t = root->find("target");
    (t ? *t : *root).fail("expected `target: gpu` or `target: tpu`, got \"" + target + "\"");
  }
}

}  // namespace

void check_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (!std::filesystem::exists(path)) throw InputError(SourcePos{path}, "no such file");
  if (ext == ".kir") return check_kernel(path);
  if (ext == ".yaml" || ext == ".yml") return check_config(path);
  throw InputError(SourcePos{path}, "unknown file kind \"" + ext + "\", expected .kir or .yaml");
}

}  // namespace gtsim::cli
