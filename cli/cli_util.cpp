#include "cli/cli_util.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <mutex>

#include "kernels_ir/parser.hpp"
#include "kernels_ir/verifier.hpp"
#include "sim/data_dir.hpp"
#include "sim/error.hpp"

#ifndef GTSIM_GIT_REV
#define GTSIM_GIT_REV "unknown"
#endif

namespace gtsim::cli {

ir::ParamValues parse_params(const std::vector<std::string>& args) {
  ir::ParamValues out;
  for (const auto& a : args) {
    SourcePos pos{"<--param " + a + ">"};
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError(pos, "expected NAME=VALUE");
    std::string name = a.substr(0, eq), v = a.substr(eq + 1);
    int64_t value = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
    if (ec != std::errc() || p != v.data() + v.size())
      throw InputError(pos, "parameter " + name + ": expected an integer, got \"" + v + "\"");
    out[name] = value;
  }
  return out;
}

std::shared_ptr<ConfigNode> load_hw(const std::string& path, const std::vector<std::string>& sets) {
  return ConfigNode::load_file(path, sets);
}

void check_known_params(const std::string& kernel_path, const ir::Kernel& kernel, const ir::ParamValues& params) {
  for (const auto& [name, _] : params) {
    bool known = false;
    for (const auto& p : kernel.params) known = known || p.name == name;
    if (!known) {
      std::string list;
      for (const auto& p : kernel.params) list += (list.empty() ? "" : ", ") + p.name;
      throw InputError(SourcePos{kernel_path}, "kernel " + kernel.name + " has no parameter \"" + name +
                                                   "\"; its parameters are: " + (list.empty() ? "(none)" : list));
    }
  }
}

std::shared_ptr<const ir::Program> load_program(const std::string& kernel_path, const ir::ParamValues& params,
                                                const ConfigNode* hw, std::shared_ptr<const ir::Kernel>* parsed) {
  return load_program(kernel_path, params, hw, parsed, ir::parse_kernel_file(kernel_path));
}

std::shared_ptr<const ir::Program> load_program(const std::string& kernel_path, const ir::ParamValues& params,
                                                const ConfigNode* hw, std::shared_ptr<const ir::Kernel>* parsed,
                                                std::shared_ptr<const ir::Kernel> kernel) {
  if (kernel->tpu)
    throw InputError(SourcePos{kernel_path, kernel->loc.line, kernel->loc.col},
                     "kernel " + kernel->name +
                         " is a TPU-dialect kernel (tpu_kernel): run it on a TPU config, e.g. "
                         "gtsim run --hw hw_configs/tpu-v5e.yaml --kernel " +
                         kernel_path);
  check_known_params(kernel_path, *kernel, params);
  ir::VerifyLimits limits;
  const ir::VerifyLimits* lp = nullptr;
  if (hw && hw->has("sm")) {
    const ConfigNode& sm = hw->at("sm");
    limits.max_threads_per_cta = sm.param<uint32_t>("max_threads_per_cta").get();
    limits.max_regs_per_thread = sm.param<uint32_t>("max_regs_per_thread").get();
    limits.max_shared_per_cta = sm.at("shared").param<uint32_t>("max_per_cta_bytes").get();
    lp = &limits;
  }
  auto diags = ir::verify(*kernel, params, lp);
  if (!diags.empty()) throw InputError(std::move(diags));
  auto program = ir::Program::build(*kernel, params);
  if (parsed) *parsed = std::move(kernel);
  return program;
}

namespace {

// A shipped config (data_dir()/hw_configs/*.yaml): its file name and its values without its
// `validation` block, which is the part `gtsim validate` rewrites.
struct Shipped {
  std::string file;
  nlohmann::json values;
};

nlohmann::json values_of(const ConfigNode& hw) {
  nlohmann::json j = hw.to_json();
  if (j.is_object()) j.erase("validation");
  return j;
}

const std::multimap<std::string, Shipped>& shipped_configs() {
  static std::once_flag once;
  static std::multimap<std::string, Shipped> by_name;
  std::call_once(once, [] {
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    try {
      for (const auto& e : fs::directory_iterator(data_path("hw_configs")))
        if (e.path().extension() == ".yaml") files.push_back(e.path());
    } catch (const std::exception&) {
      return;  // no data folder: nothing is a shipped config
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      try {
        auto c = ConfigNode::load_file(f.string());
        by_name.emplace(c->param<std::string>("name").or_default(""), Shipped{f.filename().string(), values_of(*c)});
      } catch (const std::exception&) {  // a broken shipped file is check's business, not the label's
      }
    }
  });
  return by_name;
}

// Why a config that carries a validation status is not the machine validated ("" when it is: a
// shipped config, or a byte-for-byte copy of one): a copy with other values, or a `base:` child
// that inherited the block under another name.
std::string derived_by_values(const ConfigNode& hw) {
  const auto& shipped = shipped_configs();
  if (shipped.empty()) return "";
  const std::string name = hw.param<std::string>("name").or_default("");
  const nlohmann::json mine = values_of(hw);
  auto [lo, hi] = shipped.equal_range(name);
  if (lo == hi) return "being no shipped config (no hw_configs/*.yaml is named '" + name + "')";
  for (auto it = lo; it != hi; ++it)
    if (it->second.values == mine) return "";
  // the keys that differ from the first shipped config of that name (JSON Patch paths, dotted)
  std::string list;
  size_t n = 0;
  for (const auto& op : nlohmann::json::diff(lo->second.values, mine)) {
    if (n++ == 4) {
      list += ", ...";
      break;
    }
    std::string key = op["path"].get<std::string>().substr(1);
    std::replace(key.begin(), key.end(), '/', '.');
    list += (list.empty() ? "" : ", ") + key;
  }
  return "changing hw_configs/" + lo->second.file + "'s " + list;
}

}  // namespace

nlohmann::json validation_label(const ConfigNode& hw, const std::string& family, const std::vector<std::string>& sets) {
  nlohmann::json j = {{"status", "unknown"}, {"error_band_pct", nullptr}};
  if (!family.empty()) j["family"] = family, j["family_error_pct"] = nullptr;
  if (const ConfigNode* v = hw.find("validation")) {
    j["status"] = v->param<std::string>("status").or_default("unknown");
    double band = v->param<double>("error_band_pct").or_default(0.0);
    if (band > 0) j["error_band_pct"] = band;
    // the table of this config's name: one inherited through base: for another name does not validate it
    const ConfigNode* by_name = v->find("family_error");
    std::string name = hw.param<std::string>("name").or_default("");
    const ConfigNode* t = by_name && by_name->has(name) ? &by_name->at(name) : nullptr;
    if (!family.empty() && t && t->has("pct") && t->at("pct").has(family)) {
      j["family_error_pct"] = t->at("pct").param<double>(family).get();
      j["family_error_source"] = t->param<std::string>("source").or_default("gtsim validate");
    }
  }
  std::string changed;
  for (const std::string& s : sets)
    if (s.rfind("validation.", 0) != 0) changed += (changed.empty() ? "--set " : ", --set ") + s;
  // a copy or a `base:` child with other values than the shipped config its validation block is from
  if (changed.empty() && hw.find("validation") && j["status"] != "unknown") changed = derived_by_values(hw);
  if (!changed.empty()) {  // not the machine the figures were measured for
    j["derived_from"] = j["status"];
    j["status"] = "derived";
    j["derived_by"] = changed;
    j["error_band_pct"] = nullptr;
    if (!family.empty()) j["family_error_pct"] = nullptr, j.erase("family_error_source");
  }
  return j;
}

std::string git_revision() { return GTSIM_GIT_REV; }

}  // namespace gtsim::cli
