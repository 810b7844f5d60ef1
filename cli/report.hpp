// Human-readable reports of the JSON results.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/config.hpp"

namespace gtsim::cli {

std::string format_run_report(const nlohmann::json& run);
// The resolved config as YAML, headed by its source file and the git revision.
std::string resolved_config_text(const ConfigNode& hw, const std::string& path);
// Bytes moved, in decimal units like the rates beside them ("67.1 MB" at "3350.0 GB/s"): docs/units.md.
std::string traffic_bytes(double bytes);

}  // namespace gtsim::cli
