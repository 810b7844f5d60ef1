// compare(): the same workload on several machines, per op and in total, with the winner and why.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "models/analytic/workload_run.hpp"
#include "models/tpu/compare.hpp"
#include "sim/error.hpp"

namespace gtsim::tpu {

namespace {

struct Row {
  double time_us = 0, util = 0, fill = -1, intensity = 0;
  uint64_t hbm_bytes = 0, flops = 0;
  std::string kind, bound;
};

struct Machine {
  std::string name, target, engine;
  double peak_tflops = 0, hbm_gbps = 0, overhead_us = 0, total_us = 0;
  uint64_t hbm_bytes = 0;
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
};

std::string first_word(const std::string& b) { return b.substr(0, b.find(' ')); }

Machine tpu_machine(const ConfigNode& root, const wl::Workload& w, const CompareOptions& opt) {
  TpuConfig cfg = TpuConfig::from_node(root);
  TpuWorkloadReport rep = run_tpu_workload(cfg, w, opt.tpu);
  Machine m{cfg.name, "tpu", "simulated (models/tpu)", cfg.derived_peak_flops() / 1e12, cfg.hbm.bandwidth_gbps,
            rep.dispatch_us, rep.total_us, rep.hbm_bytes, {}, {}};
  for (const auto& r : rep.ops) {
    m.order.push_back(r.op);
    m.rows[r.op] = {r.time_us, r.mxu_utilization, r.mxu_array_fill, r.intensity, r.hbm_bytes, r.flops, r.kind,
                    first_word(r.bound)};
  }
  return m;
}

Machine gpu_machine(const ConfigNode& root, const wl::Workload& w, const CompareOptions& opt) {
  analytic::WorkloadRunOptions wo;
  wo.fusion = opt.tpu.fusion, wo.recompute = opt.tpu.recompute, wo.exact = opt.gpu_exact;
  analytic::WorkloadReport rep = analytic::run_workload(root, w, wo);
  double peak = analytic::config_peak_flops(root, ir::DType::kBf16);
  Machine m{root.param<std::string>("name").or_default("gpu"), "gpu", "simulated (models/gpu via analytic::run_workload)",
            peak / 1e12, analytic::config_hbm_bytes_per_s(root) / 1e9, 0, rep.total_us, rep.dram_bytes, {}, {}};
  for (const auto& k : rep.kernels) {
    if (!m.rows.count(k.op)) m.order.push_back(k.op);
    Row& r = m.rows[k.op];
    r.kind = k.kind;
    r.time_us += k.time_us, r.flops += k.flops, r.hbm_bytes += k.dram_read_bytes + k.dram_write_bytes;
    r.bound = k.bound;
  }
  for (auto& [op, r] : m.rows) {
    r.intensity = r.hbm_bytes ? double(r.flops) / double(r.hbm_bytes) : 0;
    bool matrix = r.kind == "matmul" || r.kind == "attention";
    r.util = matrix && r.time_us > 0 ? double(r.flops) / (r.time_us * 1e-6 * peak) : 0;
  }
  return m;
}

std::string why(const Machine& win, const Row& a, const Machine& lose, const Row& b) {
  std::ostringstream os;
  os.precision(3);
  double ratio = a.time_us > 0 ? b.time_us / a.time_us : 0;
  os << win.name << " " << ratio << "x faster: ";
  if (a.bound == "total")
    os << "sum over the ops above (HBM " << win.hbm_gbps << " vs " << lose.hbm_gbps << " GB/s, peak " << win.peak_tflops
       << " vs " << lose.peak_tflops << " TFLOP/s)";
  else if (a.bound == "memory" && b.bound == "memory")
    os << "memory-bound on both, HBM " << win.hbm_gbps << " vs " << lose.hbm_gbps << " GB/s";
  else if (a.bound == "compute" && b.bound == "compute")
    os << "compute-bound on both, peak " << win.peak_tflops << " vs " << lose.peak_tflops << " TFLOP/s";
  else
    os << win.name << " is " << a.bound << "-bound, " << lose.name << " is " << b.bound << "-bound";
  if (b.fill > 0 && b.fill < 0.9) os << "; " << lose.name << " MXU array fill " << int(100 * b.fill) << "% (padding to the array)";
  if (a.fill > 0 && a.fill < 0.9) os << "; " << win.name << " MXU array fill " << int(100 * a.fill) << "%";
  return os.str();
}

nlohmann::json row_json(const Row& r) {
  return {{"time_us", r.time_us}, {"matrix_unit_utilization", r.util}, {"hbm_bytes", r.hbm_bytes},
          {"arithmetic_intensity", r.intensity}, {"bound", r.bound}, {"mxu_array_fill", r.fill < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.fill)}};
}

// Winner among the machines that ran `op` (or the totals when op is empty).
std::pair<size_t, std::string> winner(const std::vector<Machine>& ms, const std::string& op) {
  auto row = [&](const Machine& m) {
    if (!op.empty()) return m.rows.at(op);
    Row t;
    t.time_us = m.total_us, t.hbm_bytes = m.hbm_bytes, t.bound = "total";
    return t;
  };
  size_t best = 0, second = 1;
  for (size_t i = 0; i < ms.size(); ++i)
    if (row(ms[i]).time_us < row(ms[best]).time_us) best = i;
  if (ms.size() < 2) return {best, ""};
  second = best == 0 ? 1 : 0;
  for (size_t i = 0; i < ms.size(); ++i)
    if (i != best && row(ms[i]).time_us < row(ms[second]).time_us) second = i;
  std::string w = why(ms[best], row(ms[best]), ms[second], row(ms[second]));
  if (op.empty())
    for (const auto& m : ms)
      if (m.overhead_us > 0) w += "; " + m.name + " total includes " + std::to_string(int(m.overhead_us)) + " us dispatch once";
  return {best, w};
}

std::string table(const std::vector<Machine>& ms, const std::vector<std::string>& ops, const nlohmann::json& jops,
                  const nlohmann::json& total) {
  std::ostringstream o;
  char buf[400];
  for (const auto& m : ms) o << "machine: " << m.name << " (" << m.target << ", " << m.engine << ")\n";
  std::snprintf(buf, sizeof buf, "%-18s %-26s %10s %7s %10s %8s %-8s\n", "op", "machine", "time_us", "matrix%", "hbm_MB",
                "flop/B", "bound");
  o << buf;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const auto& m : ms) {
      auto it = m.rows.find(ops[i]);
      if (it == m.rows.end()) continue;
      const Row& r = it->second;
      std::snprintf(buf, sizeof buf, "%-18.18s %-26.26s %10.2f %6.1f%% %10.2f %8.1f %-8s\n", ops[i].c_str(), m.name.c_str(),
                    r.time_us, 100 * r.util, double(r.hbm_bytes) / 1e6, r.intensity, r.bound.c_str());
      o << buf;
    }
    o << "  -> " << jops[i].value("why", std::string("")) << "\n";
  }
  for (const auto& m : ms) {
    std::snprintf(buf, sizeof buf, "%-18s %-26.26s %10.2f %7s %10.2f\n", "TOTAL", m.name.c_str(), m.total_us, "",
                  double(m.hbm_bytes) / 1e6);
    o << buf;
  }
  o << "  -> " << total.value("why", std::string("")) << "\n";
  return o.str();
}

}  // namespace

CompareResult compare(const wl::Workload& w, const std::vector<std::shared_ptr<ConfigNode>>& hw_roots,
                      const CompareOptions& opt) {
  if (hw_roots.empty()) throw InputError(SourcePos{}, "compare needs at least one --hw config");
  std::vector<Machine> ms;
  for (const auto& root : hw_roots) {
    std::string target = root->param<std::string>("target").one_of({"gpu", "tpu"}).get();
    ms.push_back(target == "tpu" ? tpu_machine(*root, w, opt) : gpu_machine(*root, w, opt));
  }
  std::vector<std::string> ops;  // ops every machine ran, in the first machine's order
  for (const auto& op : ms[0].order)
    if (std::all_of(ms.begin(), ms.end(), [&](const Machine& m) { return m.rows.count(op) > 0; })) ops.push_back(op);
  nlohmann::json jops = nlohmann::json::array(), machines = nlohmann::json::array();
  for (const auto& op : ops) {
    nlohmann::json per = nlohmann::json::object();
    for (const auto& m : ms) per[m.name] = row_json(m.rows.at(op));
    auto [best, reason] = winner(ms, op);
    jops.push_back({{"op", op}, {"kind", ms[0].rows.at(op).kind}, {"machines", per}, {"winner", ms[best].name}, {"why", reason}});
  }
  for (const auto& m : ms)
    machines.push_back({{"name", m.name}, {"target", m.target}, {"engine", m.engine}, {"peak_tflops", m.peak_tflops},
                        {"hbm_gbps", m.hbm_gbps}, {"ridge_flop_per_byte", m.peak_tflops * 1e3 / m.hbm_gbps},
                        {"per_call_overhead_us", m.overhead_us}, {"total_us", m.total_us}, {"hbm_bytes", m.hbm_bytes}});
  auto [best, reason] = winner(ms, "");
  nlohmann::json total = {{"winner", ms[best].name}, {"why", reason}};
  for (const auto& m : ms) total[m.name] = {{"time_us", m.total_us}, {"hbm_bytes", m.hbm_bytes}};
  CompareResult res;
  res.json = {{"workload", w.name()}, {"machines", machines}, {"ops", jops}, {"total", total}};
  res.text = table(ms, ops, jops, total);
  return res;
}

}  // namespace gtsim::tpu
