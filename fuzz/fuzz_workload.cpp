// Fuzz body for workloads (kernels_ir/graph): the YAML reader with its shape parameters and
// elementwise expressions, the DAG checks, and the summaries `gtsim workload` prints.
//
// Input layout:
//   #expr              first line: the rest is one elementwise expression (wl::parse_ew_expression)
//   #param NAME=VALUE  leading lines: --param overrides (wl::parse_param_overrides), then
//   the workload YAML  (Workload::load_string)
#include <map>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "sim/error.hpp"

namespace {

constexpr std::string_view kExpr = "#expr\n", kParam = "#param ";

void expression(std::string_view text) {
  std::vector<std::string> names;
  auto e = gtsim::wl::parse_ew_expression(std::string(text), names, gtsim::SourcePos{"<expr>", 1, 1});
  (void)e.str(names);
  (void)e.flops();
}

void workload(std::string_view text) {
  std::vector<std::string> overrides;
  while (text.substr(0, kParam.size()) == kParam) {
    size_t nl = text.find('\n');
    overrides.emplace_back(text.substr(kParam.size(), nl == std::string_view::npos ? nl : nl - kParam.size()));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  std::map<std::string, int64_t> params = gtsim::wl::parse_param_overrides(overrides);
  auto w = gtsim::wl::Workload::load_string(std::string(text), "fuzz.yaml", params);
  for (const auto* op : w.ops_in_order()) {
    (void)op->flops();
    (void)op->min_bytes();
    (void)op->intensity();
  }
  (void)w.total_flops();
  (void)w.total_min_bytes();
  (void)w.describe();
}

}  // namespace

int gtsim_fuzz_workload(const uint8_t* data, size_t size) {
  if (size > gtsim::fuzz::kMaxInputBytes) return 0;
  std::string_view text = gtsim::fuzz::as_text(data, size);
  try {
    if (text.substr(0, kExpr.size()) == kExpr)
      expression(text.substr(kExpr.size()));
    else
      workload(text);
  } catch (const gtsim::InputError& e) {
    for (const auto& d : e.diagnostics()) (void)d.str();
  }
  return 0;
}
