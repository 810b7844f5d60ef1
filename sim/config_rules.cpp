#include "sim/config_rules.hpp"

#include "sim/config.hpp"

namespace gtsim::config_rules {
namespace {

constexpr double kTiB = 1099511627776.0;  // 2^40 bytes

// Glob with `*` only, iterative (no recursion on hostile keys).
bool glob(const char* p, size_t plen, const std::string& s) {
  size_t pi = 0, si = 0, star = std::string::npos, mark = 0;
  while (si < s.size()) {
    if (pi < plen && p[pi] != '*' && p[pi] == s[si]) {
      ++pi, ++si;
    } else if (pi < plen && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (star != std::string::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < plen && p[pi] == '*') ++pi;
  return pi == plen;
}

std::string num(double v) { return config_detail::format_double(v); }

}  // namespace

const std::vector<Rule>& rules() {
  // Rates have a floor as well as a ceiling: time = work / rate, and a rate of 1e-300 makes a
  // duration that overflows the simulator's 64-bit picosecond clock (about 213 days), which turned
  // into a *faster* run. Durations and latencies stop at 1e6 of their unit for the same reason.
  static const std::vector<Rule> kRules = {
      {"*efficiency*", 0, 1, true, false, false, "an efficiency", "",
       "a fraction of a peak that is achieved; 0 would never finish"},
      {"*fraction*|*_frac", 0, 1, false, false, false, "a fraction", "", "a share of a whole"},
      {"*flops_per_cycle.*|*flops_per_cycle", 1e-3, 1e7, false, false, false, "a compute rate", "flop/cycle",
       "per SM (or core) per clock; 1e7 is over 1000x the largest shipped (8192 fp8 flop/cycle/SM, H100), below "
       "1e-3 one instruction would take millions of cycles"},
      {"*requests_per_cycle*", 1e-3, 1024, false, false, true, "a request rate", "requests/cycle",
       "0 means no limit; otherwise at least one request per 1000 cycles and at most 1024 per cycle"},
      {"*bytes_per_cycle*", 1e-3, 1e6, false, false, false, "a bandwidth", "bytes/cycle",
       "a port moves at least one byte per 1000 cycles and at most 1 MB per cycle (the widest shipped: 580)"},
      {"*_per_cycle*", 1e-3, 1e6, false, false, false, "a per-cycle rate", "/cycle",
       "instructions, rows or operations per clock: at least one per 1000 cycles, at most 1e6"},
      {"*_gbps|*bandwidth*", 1e-3, 1e12, false, false, false, "a bandwidth", "GB/s",
       "at least 1 MB/s; real memories stop near 1e5 GB/s (the fastest shipped: TPU v6e VMEM, 60800), the ceiling "
       "is 1 ZB/s so a what-if run can make memory free (a byte then takes 1e-21 s, which rounds to 0 ps)"},
      {"*_tflops", 1e-3, 1e6, false, false, false, "a compute peak", "TFLOP/s",
       "from 1 GFLOP/s to 1 EFLOP/s per chip (the largest shipped: 918)"},
      {"*_mhz", 1, 1e5, true, false, false, "a clock", "MHz", "above 1 MHz and at most 100 GHz"},
      {"*cycles_per_*|*_cycles", 0, 1e6, false, false, false, "a latency or duration", "cycles",
       "1e6 cycles is 0.5 ms at 2 GHz, over 1000x the slowest DRAM access"},
      {"*_ns", 0, 1e6, false, false, false, "a latency", "ns", "1 ms, over 1000x a DRAM access (~500 ns)"},
      {"*_us", 0, 1e6, false, false, false, "a time", "us", "1 s, over 1000x a kernel launch or dispatch"},
      {"*_pct", 0, 1000, false, false, false, "a percentage", "%", "an error band of at most 10x the value"},
      {"*.mixed_traffic_overhead", 0, 4, false, false, false, "an overhead fraction", "",
       "extra time of mixed reads and writes, as a fraction of the pure stream's: 4 is 5x slower"},
      {"*size_bytes", 1, kTiB, false, false, false, "a size", "bytes", "at least one byte, at most 1 TiB"},
      {"*_gb", 1e-9, kTiB / 1e9, false, false, false, "a capacity", "GB",
       "at least one byte, at most 1 TiB (the largest shipped: 141 GB)"},
      {"*_mib", 1e-6, 1048576, false, false, false, "a capacity", "MiB", "at least one byte, at most 1 TiB"},
      {"*_bytes", 0, kTiB, false, false, false, "a size", "bytes", "at most 1 TiB; 0 where the key allows none"},
      {"*_kb", 0, kTiB / 1024, false, false, false, "a size", "KB", "at most 1 TiB; 0 where the key allows none"},
      {"sm.count|sm.sub_partitions|sm.max_*|sm.registers|sm.reg_alloc_unit|sm.units.*.lanes|sm.shared.banks|"
       "sm.shared.mio_queue_depth|l1.assoc|l1.mshrs|l2.assoc|l2.partitions|l2.slices|noc.sms_per_group|"
       "hbm.banked.channels|hbm.banked.banks_per_channel|chip.tensorcores|mxu.count|mxu.rows|mxu.cols|"
       "mxu.f32_passes|vpu.sublanes|vpu.lanes|dma.engines",
       0, 1e7, false, false, false, "a count of hardware units", "",
       "at most 1e7 (the largest shipped: 65536 registers per SM)"},
  };
  return kRules;
}

bool matches(const char* pattern, const std::string& path) {
  const char* start = pattern;
  for (const char* p = pattern;; ++p) {
    if (*p == '|' || *p == '\0') {
      if (glob(start, size_t(p - start), path)) return true;
      if (*p == '\0') return false;
      start = p + 1;
    }
  }
}

std::string strip_indices(const std::string& path) {
  std::string out;
  out.reserve(path.size());
  bool in_index = false;
  for (char c : path) {
    if (c == '[')
      in_index = true;
    else if (c == ']')
      in_index = false;
    else if (!in_index)
      out += c;
  }
  return out;
}

const Rule* rule_for(const std::string& path) {
  const std::string p = strip_indices(path);
  for (const Rule& r : rules())
    if (matches(r.pattern, p)) return &r;
  return nullptr;
}

bool accepts(const Rule& r, double v) {
  if (r.zero_ok && v == 0) return true;
  if (r.lo_open ? !(v > r.lo) : !(v >= r.lo)) return false;
  if (r.hi_open ? !(v < r.hi) : !(v <= r.hi)) return false;
  return true;
}

std::string range_text(const Rule& r) {
  std::string s = (r.zero_ok ? "0 or " : "") + std::string(r.lo_open ? "(" : "[") + num(r.lo) + ", " + num(r.hi) +
                  (r.hi_open ? ")" : "]");
  if (*r.unit) s += std::string(" ") + r.unit;
  return s;
}

}  // namespace gtsim::config_rules

namespace gtsim::config_detail {

void check_physical(const ConfigNode& n, double v, const std::string& text) {
  const config_rules::Rule* r = config_rules::rule_for(n.path());
  if (!r || config_rules::accepts(*r, v)) return;
  n.fail(text + " is outside the physical range of " + r->what + ", expected a value in " +
         config_rules::range_text(*r) + " (" + r->why + "; docs/config.md)");
}

}  // namespace gtsim::config_detail
