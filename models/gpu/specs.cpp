#include "models/gpu/specs.hpp"

#include <algorithm>

#include "models/gpu/warp_scheduler.hpp"

namespace gtsim::gpu {

const char* pipe_name(Pipe p) {
  static constexpr const char* kNames[kNumPipes] = {"fp32",    "int", "fp16",   "fp64", "sfu",
                                                    "shuffle", "lsu", "tensor", "none"};
  return kNames[int(p)];
}

Pipe pipe_of(ir::OpClass op) {
  using ir::OpClass;
  switch (op) {
    case OpClass::kInt:
      return Pipe::kInt;
    case OpClass::kFp32:
      return Pipe::kFp32;
    case OpClass::kFp16:
      return Pipe::kFp16;
    case OpClass::kFp64:
      return Pipe::kFp64;
    case OpClass::kSfu:
      return Pipe::kSfu;
    case OpClass::kShuffle:
      return Pipe::kShuffle;
    case OpClass::kMma:
    case OpClass::kWgmma:
      return Pipe::kTensor;
    case OpClass::kLdGlobal:
    case OpClass::kStGlobal:
    case OpClass::kAtomGlobal:
    case OpClass::kLdShared:
    case OpClass::kStShared:
    case OpClass::kAtomShared:
    case OpClass::kLdMatrix:
    case OpClass::kStMatrix:
    case OpClass::kCpAsync:
      return Pipe::kLsu;
    default:
      return Pipe::kNone;  // commit/wait groups, barriers, mbarriers: an issue slot only
  }
}

UnitSpecs UnitSpecs::parse(const ConfigNode& node) {
  UnitSpecs u;
  u.lanes = node.param<uint32_t>("lanes").one_of({1, 2, 4, 8, 16, 32}).get();
  u.latency_cycles = node.param<uint32_t>("latency_cycles").range(1, 10000).get();
  return u;
}

namespace {

// Reads a {dtype: flops_per_cycle} map; keys must be IR dtype names (f16, bf16, tf32, e4m3, ...).
void parse_rate_map(const ConfigNode& node, std::array<double, size_t(ir::DType::kCount)>& out) {
  if (!node.is_map() && node.kind() != ConfigNode::Kind::kNull) node.fail("expected a map {dtype: flops_per_cycle}");
  if (!node.is_map()) return;
  for (const std::string& key : node.keys()) {
    int found = -1;
    std::string names;
    std::vector<std::string> all;
    for (int t = 0; t < int(ir::DType::kCount); ++t) {
      std::string n(ir::dtype_name(ir::DType(t)));
      names += (names.empty() ? "" : ", ") + n;
      all.push_back(n);
      if (n == key) found = t;
    }
    if (found < 0) {
      const std::string near = config_detail::closest(key, all);
      node.at(key).fail("unknown dtype \"" + key + "\"; expected one of " + names +
                        (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
    out[size_t(found)] = node.param<double>(key).positive().get();
  }
}

}  // namespace

TensorSpecs TensorSpecs::parse(const ConfigNode& node) {
  TensorSpecs t;
  parse_rate_map(node.at("mma_sync_flops_per_cycle"), t.mma_sync_flops_per_cycle);
  parse_rate_map(node.at("wgmma_flops_per_cycle"), t.wgmma_flops_per_cycle);
  t.latency_cycles = node.param<uint32_t>("latency_cycles").range(1, 10000).get();
  if (node.has("ldmatrix_writeback_cycles_per_reg"))
    t.ldmatrix_writeback_cycles_per_reg = node.param<double>("ldmatrix_writeback_cycles_per_reg").range(0, 64).get();
  return t;
}

SharedSpecs SharedSpecs::parse(const ConfigNode& node) {
  SharedSpecs s;
  s.banks = node.param<uint32_t>("banks").one_of({1, 2, 4, 8, 16, 32, 64}).get();
  s.bank_bytes = node.param<uint32_t>("bank_bytes").one_of({4, 8}).get();
  s.latency_cycles = node.param<uint32_t>("latency_cycles").range(1, 10000).get();
  if (node.has("mio_queue_depth")) s.mio_queue_depth = node.param<uint32_t>("mio_queue_depth").range(0, 64).get();
  if (node.has("arbitration")) {
    const std::string a = node.param<std::string>("arbitration").one_of({"fifo", "round_robin", "sub_partition"}).get();
    s.arbitration = a == "fifo" ? 0 : a == "round_robin" ? 1 : 2;
  }
  if (node.has("warp_cycles_per_wavefront"))  // round_robin's; fifo serves a request back to back
    s.warp_cycles_per_wavefront = node.param<uint32_t>("warp_cycles_per_wavefront").range(1, 16).get();
  if (node.has("mio_issue"))
    s.mio_issue_per_warp = node.param<std::string>("mio_issue").one_of({"sub_partition", "warp"}).get() == "warp";
  const ConfigNode& co = node.at("carveouts_kb");
  if (!co.is_seq() || co.size() == 0) co.fail("expected a non-empty list of shared-memory carve-outs in KB");
  for (size_t i = 0; i < co.size(); ++i) {
    uint32_t kb = co[i].as<uint32_t>();
    if (!s.carveouts_kb.empty() && kb <= s.carveouts_kb.back()) co[i].fail("carve-outs must be ascending");
    s.carveouts_kb.push_back(kb);
  }
  s.max_per_cta_bytes = node.param<uint32_t>("max_per_cta_bytes").get();
  s.reserved_per_cta_bytes = node.param<uint32_t>("reserved_per_cta_bytes").range(0, 65536).get();
  if (uint64_t(s.max_per_cta_bytes) + s.reserved_per_cta_bytes > uint64_t(s.carveouts_kb.back()) * 1024)
    node.at("max_per_cta_bytes").fail("larger than the largest carve-out minus the per-CTA reservation");
  return s;
}

SmSpecs SmSpecs::parse(const ConfigNode& node) {
  register_all();
  SmSpecs s;
  s.count = node.param<uint32_t>("count").range(1, 4096).get();
  s.sub_partitions = node.param<uint32_t>("sub_partitions").range(1, 16).get();
  s.warp_scheduler = node.param<std::string>("warp_scheduler").one_of(WarpSchedulerRegistry::instance().names()).get();
  s.issue_per_cycle = node.param<uint32_t>("issue_per_cycle").range(1, 8).get();
  if (node.has("int_on_fma")) s.int_on_fma = node.at("int_on_fma").as<bool>();
  s.max_threads = node.param<uint32_t>("max_threads").range(32, 65536).get();
  s.max_warps = node.param<uint32_t>("max_warps").range(1, 1024).get();
  s.max_ctas = node.param<uint32_t>("max_ctas").range(1, 1024).get();
  s.max_threads_per_cta = node.param<uint32_t>("max_threads_per_cta").range(32, 65536).get();
  s.registers = node.param<uint32_t>("registers").positive().get();
  s.reg_alloc_unit = node.param<uint32_t>("reg_alloc_unit").positive().get();
  s.max_regs_per_thread = node.param<uint32_t>("max_regs_per_thread").range(1, 65535).get();
  const ConfigNode& units = node.at("units");
  for (Pipe p : {Pipe::kFp32, Pipe::kInt, Pipe::kFp16, Pipe::kFp64, Pipe::kSfu, Pipe::kShuffle, Pipe::kLsu})
    s.units[int(p)] = UnitSpecs::parse(units.at(pipe_name(p)));
  s.tensor = TensorSpecs::parse(node.at("tensor"));
  s.shared = SharedSpecs::parse(node.at("shared"));
  if (node.has("barrier")) s.barrier = BarrierSpecs::parse(node.at("barrier"));
  return s;
}

BarrierSpecs BarrierSpecs::parse(const ConfigNode& node) {
  BarrierSpecs b;
  b.cycles_per_warp = node.param<uint32_t>("cycles_per_warp").range(0, 1000).get();
  b.latency_cycles = node.param<uint32_t>("latency_cycles").range(1, 100000).get();
  return b;
}

ClockSpecs ClockSpecs::parse(const ConfigNode& node) {
  ClockSpecs c;
  c.sm_mhz = node.param<double>("sm_mhz").range(1, 100000).get();
  c.mem_mhz = node.param<double>("mem_mhz").range(1, 100000).get();
  c.sm_mhz_tensor = node.has("sm_mhz_tensor") ? node.param<double>("sm_mhz_tensor").range(1, 100000).get() : c.sm_mhz;
  return c;
}

LaunchSpecs LaunchSpecs::parse(const ConfigNode& node) {
  LaunchSpecs l;
  l.overhead_us = node.param<double>("overhead_us").range(0, 1e6).get();
  l.stream_gap_us = node.has("stream_gap_us") ? node.param<double>("stream_gap_us").range(0, 1e6).get() : 0.0;
  l.cta_dispatch_cycles = node.param<uint32_t>("cta_dispatch_cycles").range(0, 1000000).get();
  return l;
}

GpuSpecs GpuSpecs::parse(const ConfigNode& root) {
  GpuSpecs g;
  g.name = root.param<std::string>("name").get();
  std::string target = root.param<std::string>("target").or_default("gpu");
  if (target != "gpu") root.at("target").fail("the GPU model needs target: gpu, got \"" + target + "\"");
  if (const ConfigNode* v = root.find("validation")) {
    g.validation_status = v->param<std::string>("status").or_default("");
    g.validation_error_band_pct = v->param<double>("error_band_pct").range(0, 1000).or_default(0);
    if (const ConfigNode* by_name = v->find("family_error"))
      for (const auto& name : by_name->keys()) {  // every table is checked; this config's is kept
        const ConfigNode& t = by_name->at(name);
        std::string source = t.param<std::string>("source").get();
        std::map<std::string, double> pct;
        for (const auto& family : t.at("pct").keys())
          pct[family] = t.at("pct").param<double>(family).range(0, 1000).get();
        if (name == g.name) g.validation_family_error_pct = pct, g.validation_family_error_source = source;
      }
  }
  g.clocks = ClockSpecs::parse(root.at("clocks"));
  g.launch = LaunchSpecs::parse(root.at("launch"));
  g.sm = SmSpecs::parse(root.at("sm"));
  g.l1_unified_kb = root.at("l1").param<uint32_t>("unified_kb").positive().get();
  if (uint64_t(g.sm.shared.carveouts_kb.back()) > g.l1_unified_kb)
    root.at("sm").at("shared").at("carveouts_kb").fail("largest carve-out exceeds l1.unified_kb");
  return g;
}

}  // namespace gtsim::gpu
