#include "models/mem/mem_specs.hpp"

#include <bit>

#include "models/mem/hbm.hpp"

namespace gtsim::mem {
namespace {

void require_pow2(const ConfigNode& n, const std::string& key, uint64_t v) {
  if (!std::has_single_bit(v)) n.at(key).fail("expected a power of two, got " + std::to_string(v));
}

}  // namespace

L1Specs L1Specs::parse(const ConfigNode& n) {
  L1Specs s;
  s.unified_bytes = n.param<uint32_t>("unified_kb").range(0, 1u << 20).get() * 1024u;
  s.line_bytes = n.param<uint32_t>("line_bytes").one_of({128}).or_default(128);
  s.sector_bytes = n.param<uint32_t>("sector_bytes").one_of({32}).or_default(32);
  s.assoc = n.param<uint32_t>("assoc").range(1, 64).get();
  s.latency_cycles = n.param<uint32_t>("latency_cycles").range(1, 10000).get();
  s.mshrs = n.param<uint32_t>("mshrs").range(1, 65536).get();
  s.requests_per_cycle = n.param<double>("requests_per_cycle").positive().or_default(1.0);
  s.bytes_per_cycle = n.param<double>("bytes_per_cycle").positive().or_default(128.0);
  return s;
}

NocSpecs NocSpecs::parse(const ConfigNode& n) {
  NocSpecs s;
  s.bytes_per_cycle_per_sm = n.param<double>("bytes_per_cycle_per_sm").positive().get();
  s.latency_cycles = n.param<uint32_t>("latency_cycles").range(0, 10000).get();
  s.header_bytes = n.param<uint32_t>("header_bytes").range(0, 1024).or_default(32);
  if (n.has("store_bytes_per_cycle_per_sm"))
    s.store_bytes_per_cycle_per_sm = n.param<double>("store_bytes_per_cycle_per_sm").positive().get();
  s.store_mask_bytes = n.param<uint32_t>("store_mask_bytes").range(0, 1024).or_default(0);
  s.sms_per_group = n.param<uint32_t>("sms_per_group").range(0, 4096).or_default(0);
  if (s.sms_per_group > 0) s.bytes_per_cycle_per_group = n.param<double>("bytes_per_cycle_per_group").positive().get();
  return s;
}

L2Specs L2Specs::parse(const ConfigNode& n) {
  L2Specs s;
  s.size_bytes = n.param<uint64_t>("size_bytes").positive().get();
  s.partitions = n.param<uint32_t>("partitions").range(1, 64).or_default(1);
  s.slices = n.param<uint32_t>("slices").range(1, 4096).get();
  s.assoc = n.param<uint32_t>("assoc").range(1, 64).get();
  s.line_bytes = n.param<uint32_t>("line_bytes").one_of({128}).or_default(128);
  s.sector_bytes = n.param<uint32_t>("sector_bytes").one_of({32}).or_default(32);
  s.hit_latency_cycles = n.param<uint32_t>("hit_latency_cycles").range(1, 100000).get();
  s.far_extra_cycles = n.param<uint32_t>("far_extra_cycles").range(0, 100000).or_default(0);
  s.bytes_per_cycle_per_slice = n.param<double>("bytes_per_cycle_per_slice").positive().get();
  s.requests_per_cycle_per_slice = n.param<double>("requests_per_cycle_per_slice").range(0, 64).or_default(0);
  s.near_partition_lookup = n.param<bool>("near_partition_lookup").or_default(false);
  s.near_copies = n.param<bool>("near_copies").or_default(false);
  if (n.has("write_bytes_per_cycle_per_slice"))
    s.write_bytes_per_cycle_per_slice = n.param<double>("write_bytes_per_cycle_per_slice").positive().get();
  if (s.slices % s.partitions != 0)
    n.at("slices").fail("expected a multiple of l2.partitions (" + std::to_string(s.partitions) + ")");
  uint64_t lines_per_way = s.size_bytes / s.line_bytes / s.assoc;
  if (lines_per_way < s.slices)
    n.at("size_bytes").fail("too small: fewer than one set per slice at this associativity");
  return s;
}

BankedHbmSpecs BankedHbmSpecs::parse(const ConfigNode& n) {
  BankedHbmSpecs s;
  s.channels = n.param<uint32_t>("channels").range(1, 4096).get();
  s.banks_per_channel = n.param<uint32_t>("banks_per_channel").range(1, 1024).get();
  s.row_bytes = n.param<uint32_t>("row_bytes").range(64, 1u << 20).get();
  s.interleave_bytes = n.param<uint32_t>("interleave_bytes").range(32, 1u << 20).get();
  s.trcd_ns = n.param<double>("trcd_ns").min(0.0).get();
  s.tcl_ns = n.param<double>("tcl_ns").min(0.0).get();
  s.trp_ns = n.param<double>("trp_ns").min(0.0).get();
  require_pow2(n, "row_bytes", s.row_bytes);
  require_pow2(n, "interleave_bytes", s.interleave_bytes);
  return s;
}

HbmSpecs HbmSpecs::parse(const ConfigNode& n) {
  HbmSpecs s;
  register_hbm_models();
  s.impl = n.impl(registered_hbm_models(), "bandwidth_server");
  s.capacity_gb = n.param<double>("capacity_gb").positive().get();
  s.bandwidth_gbps = n.param<double>("bandwidth_gbps").positive().get();
  s.burst_bytes = n.param<uint32_t>("burst_bytes").one_of({32, 64, 128}).get();
  s.latency_ns = n.param<double>("latency_ns").min(0.0).get();
  s.mixed_traffic_overhead = n.param<double>("mixed_traffic_overhead").range(0.0, 4.0).or_default(0.0);
  if (const ConfigNode* b = n.find("banked"))
    s.banked = BankedHbmSpecs::parse(*b);
  else if (s.impl == "banked")
    n.fail("impl \"banked\" needs a `banked:` section (channels, banks_per_channel, ...)");
  return s;
}

MemSpecs MemSpecs::parse(const ConfigNode& root) {
  MemSpecs s;
  s.sm_mhz = root.at("clocks").param<double>("sm_mhz").positive().get();
  s.l1 = L1Specs::parse(root.at("l1"));
  s.noc = NocSpecs::parse(root.at("noc"));
  s.l2 = L2Specs::parse(root.at("l2"));
  s.hbm = HbmSpecs::parse(root.at("hbm"));
  uint32_t path = s.l1.latency_cycles + 2 * s.noc.latency_cycles;
  if (s.l2.hit_latency_cycles < path)
    root.at("l2")
        .at("hit_latency_cycles")
        .fail("expected >= l1.latency_cycles + 2 * noc.latency_cycles (" + std::to_string(path) +
              "): it is the whole load-to-use latency of an L2 hit");
  if (s.l2.line_bytes != s.l1.line_bytes) root.at("l2").at("line_bytes").fail("expected the same as l1.line_bytes");
  return s;
}

}  // namespace gtsim::mem
