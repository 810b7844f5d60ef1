#include "models/tpu/tpu_config.hpp"

#include <cmath>
#include <sstream>

namespace gtsim::tpu {

const char* timing_name(MxuTiming t) { return t == MxuTiming::kTextbook ? "textbook" : "tpu_like"; }

const char* dataflow_name(Dataflow d) {
  switch (d) {
    case Dataflow::kOutputStationary:
      return "output_stationary";
    case Dataflow::kInputStationary:
      return "input_stationary";
    default:
      return "weight_stationary";
  }
}

double TpuConfig::derived_peak_flops() const {
  return double(tensorcores) * mxu.count * mxu.rows * mxu.cols * 2.0 * mxu.rows_per_cycle * core_mhz * 1e6;
}

namespace {

MxuConfig read_mxu(const ConfigNode& n) {
  MxuConfig m;
  m.count = n.param<uint32_t>("count").range(1, 64).get();
  m.rows = n.param<uint32_t>("rows").range(8, 1024).get();
  m.cols = n.param<uint32_t>("cols").range(8, 1024).get();
  m.rows_per_cycle = n.param<uint32_t>("rows_per_cycle").range(1, 16).or_default(1);
  m.f32_passes = n.param<uint32_t>("f32_passes").range(1, 8).or_default(3);
  const ConfigNode& t = n.at("timing");
  std::string name = t.as<std::string>();
  if (name == "textbook")
    m.timing = MxuTiming::kTextbook;
  else if (name == "tpu_like")
    m.timing = MxuTiming::kTpuLike;
  else {
    const std::string near = config_detail::closest(name, {"textbook", "tpu_like"});
    t.fail("unknown timing \"" + name + "\", registered: textbook, tpu_like" +
           (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }
  const std::string df = n.param<std::string>("dataflow")
                             .one_of({"weight_stationary", "output_stationary", "input_stationary"})
                             .or_default("weight_stationary");
  if (df == "output_stationary")
    m.dataflow = Dataflow::kOutputStationary;
  else if (df == "input_stationary")
    m.dataflow = Dataflow::kInputStationary;
  // tpu_like's overlap (the next weight tile loads while the current one streams) is weight-stationary's;
  // output and input stationary fold as in textbook under either timing (docs/tpu_dataflows.md).
  m.sram_words_per_cycle = n.param<double>("sram_bandwidth_words_per_cycle").positive().optional().value_or(0.0);
  return m;
}

VpuConfig read_vpu(const ConfigNode& n) {
  VpuConfig v;
  v.sublanes = n.param<uint32_t>("sublanes").range(1, 64).get();
  v.lanes = n.param<uint32_t>("lanes").range(1, 1024).get();
  v.alu_ops_per_cycle = n.param<double>("alu_ops_per_cycle").positive().get();
  v.transcendental_cycles = n.param<double>("transcendental_cycles").positive().get();
  v.reduce_cycles_per_tile = n.param<double>("reduce_cycles_per_tile").positive().get();
  return v;
}

void check_peak(const TpuConfig& c, const ConfigNode& root) {
  if (c.stated_peak_bf16_tflops <= 0) return;
  double derived = c.derived_peak_flops() / 1e12;
  if (std::fabs(derived - c.stated_peak_bf16_tflops) > 0.05 * c.stated_peak_bf16_tflops) {
    std::ostringstream os;
    os << "chip.peak_bf16_tflops " << c.stated_peak_bf16_tflops << " disagrees with the MXU array: " << c.tensorcores
       << " TC x " << c.mxu.count << " MXU x " << c.mxu.rows << "x" << c.mxu.cols << " x 2 x " << c.mxu.rows_per_cycle
       << " rows/cycle x " << c.core_mhz << " MHz = " << derived
       << " TFLOP/s (more than 5% apart); fix mxu.count, mxu.rows_per_cycle or clocks.core_mhz";
    root.at("chip").at("peak_bf16_tflops").fail(os.str());
  }
}

}  // namespace

TpuConfig TpuConfig::from_node(const ConfigNode& root) {
  TpuConfig c;
  c.source = root.pos().file;
  c.name = root.param<std::string>("name").or_default("tpu");
  root.param<std::string>("target").one_of({"tpu"}).get();
  if (const ConfigNode* v = root.find("validation")) {
    c.validation_status = v->param<std::string>("status").one_of({"blind", "fitted", "calibrated"}).get();
    c.validation_error_band_pct = v->param<double>("error_band_pct").min(0).get();
  }
  c.core_mhz = root.at("clocks").param<double>("core_mhz").positive().get();
  const ConfigNode& chip = root.at("chip");
  c.tensorcores = chip.param<uint32_t>("tensorcores").range(1, 16).get();
  c.stated_peak_bf16_tflops = chip.param<double>("peak_bf16_tflops").positive().get();
  c.dispatch_us = root.at("dispatch").param<double>("overhead_us").min(0).get();
  c.scalar_issue_cycles = root.at("scalar").param<uint32_t>("issue_cycles").range(0, 1000).get();
  c.mxu = read_mxu(root.at("mxu"));
  c.vpu = read_vpu(root.at("vpu"));
  const ConfigNode& vmem = root.at("vmem");
  c.vmem_mib = vmem.param<double>("capacity_mib").positive().get();
  c.vmem_bandwidth_gbps = vmem.param<double>("bandwidth_gbps").positive().get();
  const ConfigNode& dma = root.at("dma");
  c.dma_engines = dma.param<uint32_t>("engines").range(1, 64).get();
  c.dma_issue_cycles = dma.param<uint32_t>("issue_cycles").range(0, 100000).get();
  c.hbm = mem::HbmSpecs::parse(root.at("hbm"));  // the memory side's parser and registry
  check_peak(c, root);
  root.require_all_used();
  return c;
}

TpuConfig TpuConfig::load(const std::string& path, const std::vector<std::string>& overrides) {
  auto root = ConfigNode::load_file(path, overrides);
  return from_node(*root);
}

}  // namespace gtsim::tpu
