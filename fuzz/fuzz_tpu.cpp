// Fuzz body for the TPU dialect (kernels_ir/tpu_dialect.hpp): parse a tpu_kernel, run the dialect's
// verifier (which expands it with the default parameters), then build the core program against a
// shipped TPU config (models/tpu/from_ir.hpp: tpu::verify checks the machine limits).
#include <string>

#include "fuzz/fuzz_targets.hpp"
#include "kernels_ir/parser.hpp"
#include "kernels_ir/tpu_dialect.hpp"
#include "models/tpu/from_ir.hpp"
#include "models/tpu/tpu_config.hpp"
#include "sim/error.hpp"

#ifndef GTSIM_SOURCE_DIR
#error "GTSIM_SOURCE_DIR must name the source tree (fuzz/CMakeLists.txt sets it)"
#endif

namespace {

const gtsim::tpu::TpuConfig& machine() {
  static const gtsim::tpu::TpuConfig cfg = gtsim::tpu::TpuConfig::load(GTSIM_SOURCE_DIR "/hw_configs/tpu-v5e.yaml");
  return cfg;
}

}  // namespace

int gtsim_fuzz_tpu(const uint8_t* data, size_t size) {
  if (size > gtsim::fuzz::kMaxInputBytes) return 0;
  const auto& cfg = machine();  // outside the try: a shipped config that fails to load is a bug
  try {
    auto kernel = gtsim::ir::parse_kernel_string(gtsim::fuzz::as_text(data, size), "fuzz.kir");
    if (!kernel->tpu) return 0;  // GPU kernels are fuzz_kernel's
    auto diags = gtsim::ir::verify_tpu(*kernel);
    if (!diags.empty()) throw gtsim::InputError(std::move(diags));
    auto program = gtsim::tpu::core_program_from_ir(*kernel, {}, cfg);
    (void)gtsim::tpu::chip_program_from_ir(*kernel, {}, cfg);
    (void)program;
  } catch (const gtsim::InputError& e) {
    for (const auto& d : e.diagnostics()) (void)d.str();
  }
  return 0;
}
