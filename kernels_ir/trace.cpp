#include "kernels_ir/trace.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "kernels_ir/exec/shared_banks.hpp"

namespace gtsim::ir {
namespace {

uint32_t lanes_of(const DynInst& d) { return d.addr_active ? d.addr_active : 0; }

uint32_t distinct_spans(const DynInst& d, const uint64_t* addr, uint32_t unit) {
  uint64_t ids[kWarpSize * 4];
  size_t n = 0;
  uint32_t bytes = std::max<uint32_t>(d.access_bytes, 1);
  for (uint32_t m = lanes_of(d); m; m &= m - 1) {
    uint64_t a = addr[std::countr_zero(m)];
    for (uint64_t u = a / unit; u <= (a + bytes - 1) / unit && n < std::size(ids); ++u) ids[n++] = u;
  }
  std::sort(ids, ids + n);
  return uint32_t(std::unique(ids, ids + n) - ids);
}

bool is_global(OpClass c) {
  return c == OpClass::kLdGlobal || c == OpClass::kStGlobal || c == OpClass::kAtomGlobal || c == OpClass::kCpAsync;
}
bool is_shared(OpClass c) {
  return c == OpClass::kLdShared || c == OpClass::kStShared || c == OpClass::kAtomShared || c == OpClass::kLdMatrix ||
         c == OpClass::kStMatrix || c == OpClass::kCpAsync;
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string lane_addresses(uint32_t mask, const uint64_t* addr) {
  if (!mask) return "-";
  int first = std::countr_zero(mask);
  int64_t stride = 0;
  bool affine = true, have = false;
  for (uint32_t m = mask & (mask - 1); m; m &= m - 1) {
    int l = std::countr_zero(m);
    int64_t s = (int64_t(addr[l]) - int64_t(addr[first])) / (l - first);
    if (int64_t(addr[first]) + s * (l - first) != int64_t(addr[l]) || (have && s != stride)) affine = false;
    stride = s, have = true;
  }
  if (affine) return hex(addr[first]) + (have ? "+" + std::to_string(stride) + "*lane" : "");
  std::string s = "[";
  for (uint32_t m = mask; m; m &= m - 1) s += (s.size() > 1 ? " " : "") + hex(addr[std::countr_zero(m)]);
  return s + "]";
}

}  // namespace

SectorCount count_sectors_lines(const DynInst& d, const TraceGeometry& g) {
  return SectorCount{distinct_spans(d, d.addr, g.sector_bytes), distinct_spans(d, d.addr, g.line_bytes)};
}

uint32_t shared_wavefronts(const DynInst& d, const TraceGeometry& g) {
  return shared_cost(d, g.banks, g.bank_bytes, d.op == OpClass::kCpAsync ? d.addr2 : d.addr).wavefronts;
}

std::string trace_warp(const Program& p, Dim3 ctaid, uint32_t warp, size_t limit, const TraceGeometry& g) {
  WarpExecutor w(p, ctaid, warp);
  DynInst d;
  std::string out;
  char buf[64];
  for (size_t i = 0; i < limit && w.next(d); ++i) {
    std::snprintf(buf, sizeof buf, "%6zu  %08x  ", i, d.active);
    out += buf + p.instruction(d.static_id).text;
    if (is_global(d.op)) {
      auto sc = count_sectors_lines(d, g);
      out += "  addr=" + lane_addresses(d.addr_active, d.addr) + " bytes=" + std::to_string(d.access_bytes) +
             " sectors=" + std::to_string(sc.sectors) + " lines=" + std::to_string(sc.lines);
    }
    if (is_shared(d.op)) {
      const uint64_t* a = d.op == OpClass::kCpAsync ? d.addr2 : d.addr;
      out += "  smem=" + lane_addresses(shared_lanes(d), a) + " wavefronts=" + std::to_string(shared_wavefronts(d, g));
    }
    out += '\n';
  }
  return out;
}

}  // namespace gtsim::ir
