// In-place edits of a YAML config: replace the value of a key at the line and column where the
// config reader found it, and the comment of that line; every other byte of the file is kept.
#pragma once

#include <string>
#include <vector>

namespace gtsim::validation {

struct ValueEdit {
  std::string key;      // dotted path, e.g. "hbm.bandwidth_gbps" or "sm.tensor.mma_sync_flops_per_cycle.bf16"
  std::string value;    // the new scalar text
  std::string comment;  // the new comment for the line (without '#'); several edits on one line are joined by "; "
};

// Returns the edited text of `path`. Throws InputError when a key is not in the file itself
// (inherited through base:, or absent) or its value is not a plain scalar.
std::string edit_config_text(const std::string& path, const std::vector<ValueEdit>& edits);
// Edits `path` in place (written through a temporary file and renamed).
void edit_config_file(const std::string& path, const std::vector<ValueEdit>& edits);

}  // namespace gtsim::validation
