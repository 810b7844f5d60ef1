#include "sim/data_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "sim/error.hpp"

#ifndef GTSIM_BUILD_SOURCE_DIR
#define GTSIM_BUILD_SOURCE_DIR ""
#endif

namespace gtsim {
namespace fs = std::filesystem;

namespace {

bool holds_library(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_directory(dir / "kernels_ir" / "lib", ec);
}

// The running executable's folder, from /proc/self/exe (empty when it cannot be read).
fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path();
}

}  // namespace

std::string data_dir() {
  std::string looked;
  if (const char* env = std::getenv("GTSIM_DATA"); env && *env) {
    if (holds_library(env)) return fs::path(env).lexically_normal().string();
    throw InputError(SourcePos{"GTSIM_DATA=" + std::string(env)},
                     "no kernels_ir/lib in this folder; expected GTSIM_DATA to name gtsim's data folder "
                     "(an installed tree's share/gtsim, or the source tree)");
  }
  looked += "$GTSIM_DATA (not set)";
  fs::path exe = executable_dir();
  if (!exe.empty()) {
    fs::path share = (exe / ".." / "share" / "gtsim").lexically_normal();
    if (holds_library(share)) return share.string();
    looked += ", " + share.string();
  } else {
    looked += ", <executable's folder>/../share/gtsim (/proc/self/exe unreadable)";
  }
  fs::path src = GTSIM_BUILD_SOURCE_DIR;
  if (holds_library(src)) return src.string();
  if (!src.empty()) looked += ", " + src.string() + " (the source tree it was built from)";
  throw InputError(SourcePos{"kernels_ir/lib"},
                   "gtsim's data folder (kernels_ir/lib, hw_configs, ...) not found; "
                   "looked in " +
                       looked + "; set GTSIM_DATA to the folder that holds kernels_ir/lib");
}

std::string data_path(const std::string& rel) { return (fs::path(data_dir()) / rel).string(); }

}  // namespace gtsim
