// The memory side's parameters, parsed apart from the model (every key documented in
// docs/gpu_memory.md). Parsing validates ranges and cross-key rules and throws InputError with
// the YAML position; the model objects only simulate.
#pragma once

#include <cstdint>
#include <string>

#include "sim/config.hpp"

namespace gtsim::mem {

struct L1Specs {
  uint32_t unified_bytes = 0;  // l1.unified_kb: L1 + shared per SM (the carve-out is taken from it)
  uint32_t line_bytes = 128;   // tag granularity
  uint32_t sector_bytes = 32;  // fill granularity
  uint32_t assoc = 4;
  uint32_t latency_cycles = 33;   // load-to-use latency of an L1 hit, SM cycles
  uint32_t mshrs = 256;           // outstanding line misses per SM
  double requests_per_cycle = 1;  // tag lookups per SM cycle
  double bytes_per_cycle = 128;   // data return per SM cycle
  static L1Specs parse(const ConfigNode& n);
};

struct NocSpecs {
  double bytes_per_cycle_per_sm = 64;  // per SM port, each direction, SM cycles
  uint32_t latency_cycles = 40;        // one-way traversal
  uint32_t header_bytes = 32;          // a load / atomic request without data
  // A store's line request is sent as its sectors' data (32 bytes each, whole or not) plus, when one
  // of them is written only in part, its byte mask (store_mask_bytes): its wire bytes. An SM sends
  // store_bytes_per_cycle_per_sm wire bytes per SM cycle on top of its port's rate; 0: only the port's.
  double store_bytes_per_cycle_per_sm = 0;
  uint32_t store_mask_bytes = 0;
  // SM groups: every sms_per_group SMs in order (the model places CTA i on SM i of an idle machine)
  // share one link for their L2 -> SM data, of bytes_per_cycle_per_group (SM cycles). On the H200 the
  // 8 SMs that a cluster of 8 CTAs is placed on (4 TPCs) share one. 0: each SM's own port only.
  uint32_t sms_per_group = 0;
  double bytes_per_cycle_per_group = 0;
  static NocSpecs parse(const ConfigNode& n);
};

struct L2Specs {
  uint64_t size_bytes = 0;
  uint32_t partitions = 2;
  uint32_t slices = 80;
  uint32_t assoc = 16;
  uint32_t line_bytes = 128;
  uint32_t sector_bytes = 32;
  uint32_t hit_latency_cycles = 200;  // load-to-use latency of a near L2 hit seen by the SM (L1 miss included)
  uint32_t far_extra_cycles = 0;      // added when the slice sits in the SM's far partition
  double bytes_per_cycle_per_slice = 32;
  // Requests a slice takes per cycle, whatever their size (its tag lookup): a request costs
  // max(bytes / bytes_per_cycle_per_slice, 1 / requests_per_cycle_per_slice) cycles. 0: no limit.
  double requests_per_cycle_per_slice = 0;
  // A store or atomic to a line homed in the far partition is handled by a slice of the SM's own
  // partition first (it localizes and caches far data), at the same cost, then by the home slice.
  bool near_partition_lookup = false;
  // A load of a line homed in the far partition leaves a clean copy in a slice of the SM's own
  // partition (it "localizes and caches" far data); the next load from that partition finds it there at
  // the near latency. The copies share the slices' capacity with the lines homed there, so one SM sees
  // about one partition's worth of L2, the far one behind it as a second level. Stores and atomics
  // update the writer's copy and drop the others.
  bool near_copies = false;
  // A store costs its slice its wire bytes (NocSpecs) at this rate; 0: its sectors at
  // bytes_per_cycle_per_slice, as a load's.
  double write_bytes_per_cycle_per_slice = 0;
  static L2Specs parse(const ConfigNode& n);
};

struct BankedHbmSpecs {
  uint32_t channels = 32;
  uint32_t banks_per_channel = 16;
  uint32_t row_bytes = 1024;
  uint32_t interleave_bytes = 256;  // consecutive bytes mapped to one channel before the next
  double trcd_ns = 14, tcl_ns = 14, trp_ns = 14;
  static BankedHbmSpecs parse(const ConfigNode& n);
};

struct HbmSpecs {
  std::string impl = "bandwidth_server";
  double capacity_gb = 0;
  double bandwidth_gbps = 0;  // sustained bytes/ns (GB/s = bytes/ns) of a read-only or write-only stream
  // Extra time per byte when reads and writes mix (bus turnarounds): a byte costs
  // 1 + mixed_traffic_overhead * 4 w (1 - w) times its pure-stream time, w the write fraction of the
  // recent traffic (the last ~1 MiB); 1:1 traffic pays the whole overhead. 0: none.
  double mixed_traffic_overhead = 0;
  uint32_t burst_bytes = 32;
  double latency_ns = 300;  // added to an L2 hit for an L2 miss served by an idle HBM
  BankedHbmSpecs banked;
  static HbmSpecs parse(const ConfigNode& n);
};

struct MemSpecs {
  double sm_mhz = 1000;  // clocks.sm_mhz: L1, crossbar and L2 run on the SM clock
  L1Specs l1;
  NocSpecs noc;
  L2Specs l2;
  HbmSpecs hbm;
  static MemSpecs parse(const ConfigNode& root);
};

}  // namespace gtsim::mem
