// compare(): the same workload on several machines, per op and in total, with the winner and why.
// Every figure is split into device time and launch/dispatch; the bound is named from what the op
// attained against the machine's own ceilings, not from datasheet peaks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "kernels_ir/graph/passes.hpp"
#include "models/analytic/workload_run.hpp"
#include "models/tpu/compare.hpp"
#include "sim/error.hpp"

namespace gtsim::tpu {

std::string attained_bound(double flops_frac, double bytes_frac, uint64_t hbm_bytes, double device_us,
                           double overhead_us) {
  if (hbm_bytes == 0) bytes_frac = 0;
  bool compute = flops_frac >= kNearCeiling, memory = bytes_frac >= kNearCeiling;
  if (compute && memory) return flops_frac >= bytes_frac ? "compute" : "memory";
  if (compute) return "compute";
  if (memory) return "memory";
  return overhead_us > device_us ? "overhead" : "latency";
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Row {
  double time_us = 0, device_us = 0, overhead_us = 0;  // time = device + overhead charged to the op
  double util = 0, fill = -1, pad_bytes = -1, pad_flops = -1, intensity = 0;
  double mxu_cycles = -1, vmem_bytes = -1;      // TPU ops: the busiest MXU's cycles, VMEM traffic (-1: a GPU)
  double flops_ceiling = 0, bytes_ceiling = 0;  // per second
  std::string ceiling_name, kind, bound, engine_bound;
  uint64_t hbm_bytes = 0, flops = 0, kernels = 0;
  double attained_flops() const { return device_us > 0 ? double(flops) / (device_us * 1e-6) : 0; }
  double attained_bytes() const { return device_us > 0 ? double(hbm_bytes) / (device_us * 1e-6) : 0; }
  double flops_frac() const { return flops_ceiling > 0 ? attained_flops() / flops_ceiling : 0; }
  double bytes_frac() const { return bytes_ceiling > 0 ? attained_bytes() / bytes_ceiling : 0; }
};

struct Machine {
  std::string name, config_name, target, engine, overhead_kind;
  double peak_tflops = 0, hbm_gbps = 0, overhead_us = 0, total_us = 0, device_us = 0, dispatch_us = 0;
  uint64_t hbm_bytes = 0, hbm_capacity = 0, flops = 0;
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
};

std::string first_word(const std::string& b) { return b.substr(0, b.find(' ')); }
bool matrix_kind(const std::string& k) { return k == "matmul" || k == "attention"; }

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// The ops after the passes, by name: their dtype picks the ceiling.
std::map<std::string, ir::DType> op_dtypes(const wl::Workload& input, const CompareOptions& opt) {
  wl::Workload w = input;
  wl::PassOptions po;
  po.fusion = opt.tpu.fusion, po.recompute = opt.tpu.recompute;
  wl::run_passes(w, po);
  std::map<std::string, ir::DType> m;
  for (const wl::Op* op : w.ops_in_order()) m[op->name] = op->dtype;
  return m;
}

Machine tpu_machine(const ConfigNode& root, const wl::Workload& w, const CompareOptions& opt,
                    const std::map<std::string, ir::DType>& dtypes) {
  TpuConfig cfg = TpuConfig::from_node(root);
  TpuWorkloadReport rep = run_tpu_workload(cfg, w, opt.tpu);
  Machine m;
  m.name = m.config_name = cfg.name, m.target = "tpu", m.engine = "simulated (models/tpu)";
  m.overhead_kind = "dispatch";
  m.peak_tflops = cfg.derived_peak_flops() / 1e12, m.hbm_gbps = cfg.hbm.bandwidth_gbps;
  m.overhead_us = rep.dispatch_us, m.dispatch_us = rep.dispatch_us, m.total_us = rep.total_us;
  m.hbm_bytes = rep.hbm_bytes, m.hbm_capacity = cfg.hbm_bytes();
  const double mxu_peak = cfg.derived_peak_flops();
  const double vpu_peak =
      double(cfg.tensorcores) * cfg.vpu.sublanes * cfg.vpu.lanes * cfg.vpu.alu_ops_per_cycle * cfg.core_mhz * 1e6;
  for (const auto& r : rep.ops) {
    m.order.push_back(r.op);
    Row x;
    x.time_us = x.device_us = r.time_us, x.overhead_us = 0, x.kernels = uint64_t(r.programs);
    x.util = r.mxu_utilization, x.intensity = r.intensity, x.hbm_bytes = r.hbm_bytes, x.flops = r.flops;
    x.kind = r.kind, x.engine_bound = first_word(r.bound);
    x.mxu_cycles = double(r.mxu_cycles), x.vmem_bytes = double(r.vmem_bytes);
    auto dt = dtypes.count(r.op) ? dtypes.at(r.op) : ir::DType::kBf16;
    if (matrix_kind(r.kind)) {
      bool f32 = dt == ir::DType::kF32;
      x.flops_ceiling = f32 ? mxu_peak / cfg.mxu.f32_passes : mxu_peak;
      x.ceiling_name = f32 ? "MXU f32 (" + std::to_string(cfg.mxu.f32_passes) + " bf16 passes)" : "MXU bf16";
      x.fill = r.mxu_array_fill;
      if (r.mxu_useful_macs > 0 && r.mxu_array_macs >= r.mxu_useful_macs)
        x.pad_flops = double(r.mxu_array_macs - r.mxu_useful_macs) / double(r.mxu_useful_macs);
    } else {
      x.flops_ceiling = vpu_peak, x.ceiling_name = "vector unit";
    }
    if (r.hbm_useful_bytes > 0)
      x.pad_bytes =
          double(r.hbm_bytes > r.hbm_useful_bytes ? r.hbm_bytes - r.hbm_useful_bytes : 0) / double(r.hbm_useful_bytes);
    x.bytes_ceiling = cfg.hbm_bytes_per_s();
    x.bound = attained_bound(x.flops_frac(), x.bytes_frac(), x.hbm_bytes, x.device_us, x.overhead_us);
    m.device_us += x.device_us, m.flops += x.flops;
    m.rows[r.op] = x;
  }
  return m;
}

Machine gpu_machine(const ConfigNode& root, const wl::Workload& w, const CompareOptions& opt,
                    const std::map<std::string, ir::DType>& dtypes) {
  analytic::WorkloadRunOptions wo;
  wo.fusion = opt.tpu.fusion, wo.recompute = opt.tpu.recompute, wo.exact = opt.gpu_exact;
  analytic::WorkloadReport rep = analytic::run_workload(root, w, wo);
  // Each kernel's time includes its launch and the stream gap (workload_run.hpp): charged to its op.
  double launch = 0;
  if (const ConfigNode* l = root.find("launch"))
    launch = l->param<double>("overhead_us").or_default(0.0) + l->param<double>("stream_gap_us").or_default(0.0);
  Machine m;
  m.name = m.config_name = root.param<std::string>("name").or_default("gpu"), m.target = "gpu";
  m.engine = "simulated (models/gpu via analytic::run_workload)", m.overhead_kind = "launch";
  const double bw = analytic::config_hbm_bytes_per_s(root);
  m.peak_tflops = analytic::config_peak_flops(root, ir::DType::kBf16) / 1e12, m.hbm_gbps = bw / 1e9;
  m.overhead_us = launch, m.total_us = rep.total_us, m.hbm_bytes = rep.dram_bytes;
  if (const ConfigNode* h = root.find("hbm"))
    m.hbm_capacity = uint64_t(h->param<double>("capacity_gb").or_default(0.0) * 1e9);
  for (const auto& k : rep.kernels) {
    if (!m.rows.count(k.op)) m.order.push_back(k.op);
    Row& r = m.rows[k.op];
    r.kind = k.kind;
    r.time_us += k.time_us, r.flops += k.flops, r.hbm_bytes += k.dram_read_bytes + k.dram_write_bytes;
    r.overhead_us += std::min(launch, k.time_us), ++r.kernels;
    r.engine_bound = k.bound;
  }
  for (auto& [op, r] : m.rows) {
    r.device_us = r.time_us - r.overhead_us;
    r.intensity = r.hbm_bytes ? double(r.flops) / double(r.hbm_bytes) : 0;
    auto dt = dtypes.count(op) ? dtypes.at(op) : ir::DType::kBf16;
    if (matrix_kind(r.kind)) {
      r.flops_ceiling = analytic::config_peak_flops(root, dt);
      r.ceiling_name = "tensor cores " + std::string(ir::dtype_name(dt));
      r.util = r.device_us > 0 ? r.flops_frac() : 0;
    } else {  // elementwise / rowwise kernels run on the CUDA cores
      r.flops_ceiling = analytic::config_peak_flops(root, ir::DType::kF32), r.ceiling_name = "CUDA cores f32";
    }
    r.bytes_ceiling = bw;
    r.bound = attained_bound(r.flops_frac(), r.bytes_frac(), r.hbm_bytes, r.device_us, r.overhead_us);
    m.device_us += r.device_us, m.dispatch_us += r.overhead_us, m.flops += r.flops;
  }
  return m;
}

// "compute-bound at 85% of its 197 TFLOP/s (MXU bf16)", from what the op attained.
std::string bound_text(const Machine& m, const Row& r) {
  std::ostringstream os;
  os << m.name << " is ";
  if (r.bound == "compute")
    os << "compute-bound at " << int(std::lround(100 * r.flops_frac())) << "% of its "
       << fmt("%.4g", r.flops_ceiling / 1e12) << " TFLOP/s (" << r.ceiling_name << ")";
  else if (r.bound == "memory")
    os << "memory-bound at " << int(std::lround(100 * r.bytes_frac())) << "% of its "
       << fmt("%.4g", r.bytes_ceiling / 1e9) << " GB/s";
  else
    os << r.bound << "-bound (" << int(std::lround(100 * r.flops_frac())) << "% of peak FLOP/s, "
       << int(std::lround(100 * r.bytes_frac())) << "% of HBM bandwidth"
       << (r.bound == "overhead"
               ? ", " + fmt("%.3g", r.overhead_us) + " us launch vs " + fmt("%.3g", r.device_us) + " us device"
               : std::string())
       << ")";
  if (r.fill >= 0 && r.fill < 0.9)
    os << ", MXU fill " << int(std::lround(100 * r.fill)) << "% (padding to the "
       << "array)";
  if (r.pad_bytes > 0.05) os << ", +" << int(std::lround(100 * r.pad_bytes)) << "% HBM bytes of (8,128) tile padding";
  return os.str();
}

std::string ratio(double lose, double win) { return win > 0 ? fmt("%.3g", lose / win) + "x" : "inf"; }

std::string op_why(const Machine& win, const Row& a, const Machine& lose, const Row& b) {
  std::ostringstream os;
  os << win.name << " " << ratio(b.time_us, a.time_us) << " faster";
  if (a.overhead_us > 0 || b.overhead_us > 0) {
    os << " (device time alone: ";
    if (b.device_us >= a.device_us)
      os << win.name << " " << ratio(b.device_us, a.device_us) << " faster";
    else
      os << lose.name << " " << ratio(a.device_us, b.device_us) << " faster";
    os << "; " << win.overhead_kind << " " << fmt("%.3g", a.overhead_us) << " vs " << lose.overhead_kind << " "
       << fmt("%.3g", b.overhead_us) << " us)";
  }
  os << ": " << bound_text(win, a) << "; " << bound_text(lose, b);
  return os.str();
}

struct Verdict {
  size_t best = 0, device_best = 0;
  std::string why, dominant;
  double ratio_total = 1, ratio_device = 1;
};

// The totals: the ratio with launch/dispatch and device-only, and which part of the gap dominates.
Verdict total_verdict(const std::vector<Machine>& ms) {
  Verdict v;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (ms[i].total_us < ms[v.best].total_us) v.best = i;
    if (ms[i].device_us < ms[v.device_best].device_us) v.device_best = i;
  }
  if (ms.size() < 2) return v;
  size_t second = v.best == 0 ? 1 : 0;
  for (size_t i = 0; i < ms.size(); ++i)
    if (i != v.best && ms[i].total_us < ms[second].total_us) second = i;
  const Machine &a = ms[v.best], &b = ms[second];
  v.ratio_total = a.total_us > 0 ? b.total_us / a.total_us : 0;
  v.ratio_device = a.device_us > 0 ? b.device_us / a.device_us : 0;
  double gap = b.total_us - a.total_us, dgap = b.device_us - a.device_us, ogap = b.dispatch_us - a.dispatch_us;
  v.dominant = std::abs(ogap) > std::abs(dgap) ? "launch/dispatch" : "device time";
  std::ostringstream os;
  os << a.name << " " << ratio(b.total_us, a.total_us) << " faster in total (" << fmt("%.4g", a.total_us) << " vs "
     << fmt("%.4g", b.total_us) << " us); device time alone: ";
  if (b.device_us >= a.device_us)
    os << a.name << " " << ratio(b.device_us, a.device_us) << " faster";
  else
    os << b.name << " " << ratio(a.device_us, b.device_us) << " faster";
  os << " (" << fmt("%.4g", a.device_us) << " vs " << fmt("%.4g", b.device_us) << " us). Of the " << fmt("%.4g", gap)
     << " us gap, launch/dispatch is " << fmt("%+.4g", ogap) << " us (" << a.name << " " << fmt("%.4g", a.dispatch_us)
     << " us " << a.overhead_kind << (a.target == "tpu" ? " once" : " over its kernels") << ", " << b.name << " "
     << fmt("%.4g", b.dispatch_us) << " us " << b.overhead_kind << (b.target == "tpu" ? " once" : " over its kernels")
     << ") and device time " << fmt("%+.4g", dgap) << " us"
     << (dgap < 0 ? " (in " + b.name + "'s favour)" : std::string()) << ": " << v.dominant << " dominates";
  v.why = os.str();
  return v;
}

nlohmann::json opt_num(double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); }

nlohmann::json row_json(const Row& r) {
  return {{"time_us", r.time_us},
          {"device_us", r.device_us},
          {"dispatch_us", r.overhead_us},
          {"kernels", r.kernels},
          {"flops", r.flops},
          {"hbm_bytes", r.hbm_bytes},
          {"attained_flops_per_s", r.attained_flops()},
          {"attained_bytes_per_s", r.attained_bytes()},
          {"flops_ceiling_per_s", r.flops_ceiling},
          {"flops_ceiling", r.ceiling_name},
          {"bytes_ceiling_per_s", r.bytes_ceiling},
          {"fraction_of_peak_flops", r.flops_frac()},
          {"fraction_of_peak_bytes", r.bytes_frac()},
          {"bound", r.bound},
          {"engine_bound", r.engine_bound},
          {"matrix_unit_utilization", r.util},
          {"arithmetic_intensity", r.intensity},
          {"mxu_fill", opt_num(r.fill)},
          {"mxu_array_fill", opt_num(r.fill)},
          {"padding_waste", opt_num(r.pad_bytes)},
          {"padding_waste_flops", opt_num(r.pad_flops)},
          {"mxu_cycles", opt_num(r.mxu_cycles)},
          {"vmem_bytes", opt_num(r.vmem_bytes)}};
}

std::string pct(double f) { return f < 0 ? "-" : fmt("%.0f%%", 100 * f); }

std::string table(const std::vector<Machine>& ms, const std::vector<std::string>& ops, const nlohmann::json& jops,
                  const nlohmann::json& total) {
  std::ostringstream o;
  char buf[480];
  for (size_t i = 0; i < ms.size(); ++i) {
    const Machine& m = ms[i];
    o << "machine: " << m.name << " (" << m.target << ", " << m.engine << "; peak " << fmt("%.4g", m.peak_tflops)
      << " TFLOP/s bf16, HBM " << fmt("%.4g", m.hbm_gbps) << " GB/s, " << fmt("%.2f", double(m.hbm_capacity) / kGiB)
      << " GiB; " << m.overhead_kind << " "
      << (m.target == "tpu" ? fmt("%.4g", m.overhead_us) + " us once per workload"
                            : fmt("%.4g", m.overhead_us) + " us per kernel")
      << ")";
    if (m.name != m.config_name) o << " [renamed: another --hw has the name \"" << m.config_name << "\"]";
    o << "\n";
  }
  o << "device_us: first issue to last completion; launch_us: launch/dispatch charged to the op (a TPU's\n"
       "dispatch is charged once, in TOTAL); TFLOP/s and GB/s attained over device_us, with the share of the\n"
       "machine's own ceiling (peak of the op's dtype and unit, HBM bandwidth); bound from those shares\n";
  std::snprintf(buf, sizeof buf, "%-16s %-22s %9s %9s %8s %8s %5s %8s %5s %5s %5s %-8s\n", "op", "machine", "total_us",
                "device_us", "launch", "TFLOP/s", "%pk", "GB/s", "%bw", "fill", "pad", "bound");
  o << buf;
  auto line = [&](const std::string& op, const Machine& m, const Row& r) {
    std::snprintf(buf, sizeof buf, "%-16.16s %-22.22s %9.2f %9.2f %8.2f %8.2f %5s %8.1f %5s %5s %5s %-8s\n", op.c_str(),
                  m.name.c_str(), r.time_us, r.device_us, r.overhead_us, r.attained_flops() / 1e12,
                  pct(r.flops_frac()).c_str(), r.attained_bytes() / 1e9, pct(r.bytes_frac()).c_str(),
                  pct(r.fill).c_str(), pct(r.pad_bytes).c_str(), r.bound.c_str());
    o << buf;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const auto& m : ms) {
      auto it = m.rows.find(ops[i]);
      if (it != m.rows.end()) line(ops[i], m, it->second);
    }
    o << "  -> " << jops[i].value("why", std::string("")) << "\n";
  }
  for (const auto& m : ms) {
    Row t;
    t.time_us = m.total_us, t.device_us = m.device_us, t.overhead_us = m.dispatch_us, t.flops = m.flops;
    t.hbm_bytes = m.hbm_bytes, t.flops_ceiling = m.peak_tflops * 1e12, t.bytes_ceiling = m.hbm_gbps * 1e9;
    line("TOTAL", m, t);
  }
  o << "  -> " << total.value("why", std::string("")) << "\n";
  return o.str();
}

}  // namespace

CompareResult compare(const wl::Workload& w, const std::vector<std::shared_ptr<ConfigNode>>& hw_roots,
                      const CompareOptions& opt) {
  if (hw_roots.empty()) throw InputError(SourcePos{}, "compare needs at least one --hw config");
  const auto dtypes = op_dtypes(w, opt);
  std::vector<Machine> ms;
  for (const auto& root : hw_roots) {
    std::string target = root->param<std::string>("target").one_of({"gpu", "tpu"}).get();
    ms.push_back(target == "tpu" ? tpu_machine(*root, w, opt, dtypes) : gpu_machine(*root, w, opt, dtypes));
  }
  // Unique names: the second machine called X is "X (2)" (the JSON is keyed by name).
  std::map<std::string, int> seen;
  for (auto& m : ms) {
    int n = ++seen[m.config_name];
    if (n > 1) m.name = m.config_name + " (" + std::to_string(n) + ")";
  }
  std::vector<std::string> ops;  // ops every machine ran, in the first machine's order
  for (const auto& op : ms[0].order)
    if (std::all_of(ms.begin(), ms.end(), [&](const Machine& m) { return m.rows.count(op) > 0; })) ops.push_back(op);
  nlohmann::json jops = nlohmann::json::array(), machines = nlohmann::json::array();
  for (const auto& op : ops) {
    nlohmann::json per = nlohmann::json::object();
    for (const auto& m : ms) per[m.name] = row_json(m.rows.at(op));
    size_t best = 0;
    for (size_t i = 0; i < ms.size(); ++i)
      if (ms[i].rows.at(op).time_us < ms[best].rows.at(op).time_us) best = i;
    size_t second = best == 0 && ms.size() > 1 ? 1 : 0;
    for (size_t i = 0; i < ms.size(); ++i)
      if (i != best && ms[i].rows.at(op).time_us < ms[second].rows.at(op).time_us) second = i;
    std::string reason =
        ms.size() > 1 ? op_why(ms[best], ms[best].rows.at(op), ms[second], ms[second].rows.at(op)) : "";
    jops.push_back(
        {{"op", op}, {"kind", ms[0].rows.at(op).kind}, {"machines", per}, {"winner", ms[best].name}, {"why", reason}});
  }
  for (const auto& m : ms)
    machines.push_back({{"name", m.name},
                        {"config_name", m.config_name},
                        {"target", m.target},
                        {"engine", m.engine},
                        {"peak_tflops", m.peak_tflops},
                        {"hbm_gbps", m.hbm_gbps},
                        {"hbm_capacity_bytes", m.hbm_capacity},
                        {"hbm_capacity_gib", double(m.hbm_capacity) / kGiB},
                        {"ridge_flop_per_byte", m.peak_tflops * 1e3 / m.hbm_gbps},
                        {"overhead_kind", m.overhead_kind},
                        {"per_call_overhead_us", m.target == "tpu" ? m.overhead_us : 0.0},
                        {"launch_per_kernel_us", m.target == "gpu" ? m.overhead_us : 0.0},
                        {"device_us", m.device_us},
                        {"dispatch_us", m.dispatch_us},
                        {"total_us", m.total_us},
                        {"flops", m.flops},
                        {"hbm_bytes", m.hbm_bytes}});
  Verdict v = total_verdict(ms);
  nlohmann::json total = {{"winner", ms[v.best].name},    {"device_winner", ms[v.device_best].name},
                          {"ratio_total", v.ratio_total}, {"ratio_device", v.ratio_device},
                          {"dominant", v.dominant},       {"why", v.why}};
  for (const auto& m : ms)
    total[m.name] = {{"time_us", m.total_us},
                     {"device_us", m.device_us},
                     {"dispatch_us", m.dispatch_us},
                     {"hbm_bytes", m.hbm_bytes}};
  CompareResult res;
  res.json = {{"workload", w.name()}, {"machines", machines}, {"ops", jops}, {"total", total}};
  res.text = table(ms, ops, jops, total);
  return res;
}

}  // namespace gtsim::tpu
