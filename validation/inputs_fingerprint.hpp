// What makes docs/validation.md stale: a fingerprint of every input that decides what `gtsim
// validate` writes (the model's sources, the kernels, the machine configs and the measured data),
// recorded in the document when it is written and recomputed by a test on the committed tree.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gtsim::validation {

// The folders, relative to the source root, whose files decide validate's output. Left out:
// validation/cuda (the twins' CUDA sources: what the GPU ran, not what the model computes), the
// TPU model, configs and kernels (models/tpu/, hw_configs/tpu-*, kernels_ir/lib/tpu_*: the page
// validates the GPU model only) and the workload layer (kernels_ir/graph/, kernels_ir/workloads/,
// models/analytic/: validate runs kernels_ir/lib kernels on models/gpu and reads no workload).
const std::vector<std::string>& fingerprint_folders();

// FNV-1a (64 bits, hex) over the sorted relative paths and the bytes of every regular file under
// those folders (names starting with '.' skipped), so that any change to any of them changes it.
std::string inputs_fingerprint(const std::filesystem::path& source_root);

// The fingerprint docs/validation.md records (its "Inputs fingerprint" line), or "" when it has none.
std::string recorded_fingerprint(const std::string& markdown);

}  // namespace gtsim::validation
