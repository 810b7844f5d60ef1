// Counters of the memory side and their Nsight Compute names.
#include <bit>

#include "models/mem/memory_system_impl.hpp"

namespace gtsim::mem {

MemCounters::MemCounters(StatGroup& g)
    : ld_requests(g.child("l1").counter("ld_requests", "global load line requests (incl. cp.async)", "requests")),
      ld_sectors(g.child("l1").counter("ld_sectors", "global load sectors requested", "sectors")),
      st_requests(g.child("l1").counter("st_requests", "global store line requests", "requests")),
      st_sectors(g.child("l1").counter("st_sectors", "global store sectors", "sectors")),
      atom_requests(g.child("l1").counter("atom_requests", "global atomic line requests", "requests")),
      atom_sectors(g.child("l1").counter("atom_sectors", "global atomic sectors", "sectors")),
      l1_sector_hits(g.child("l1").counter("sector_hits", "cached-load sectors found valid in L1", "sectors")),
      l1_sector_misses(g.child("l1").counter("sector_misses", "cached-load sectors missing in L1", "sectors")),
      l1_mshr_merges(g.child("l1").counter("mshr_merges", "misses merged into a fill in flight", "requests")),
      l1_mshr_full_stalls(g.child("l1").counter("mshr_full_stalls", "misses that waited for a free MSHR", "requests")),
      l1_bypass(g.child("l1").counter("bypass", "requests sent to L2 without L1 allocation (.cg, atomics, no way)",
                                      "requests")),
      noc_up_bytes(g.child("noc").counter("up_bytes", "SM -> L2 crossbar bytes (headers and store data)", "bytes")),
      noc_down_bytes(g.child("noc").counter("down_bytes", "L2 -> SM crossbar bytes (sector data)", "bytes")),
      l2_read_sectors(g.child("l2").counter("read_sectors", "sectors read by loads", "sectors")),
      l2_write_sectors(g.child("l2").counter("write_sectors", "sectors written by stores", "sectors")),
      l2_atom_sectors(g.child("l2").counter("atom_sectors", "sectors of atomics", "sectors")),
      l2_sector_hits(g.child("l2").counter("sector_hits", "sector lookups that hit (stores: line present)", "sectors")),
      l2_sector_misses(g.child("l2").counter("sector_misses", "sector lookups that missed", "sectors")),
      l2_read_hits(g.child("l2").counter("read_sector_hits", "load sectors that hit", "sectors")),
      l2_evictions_dirty(g.child("l2").counter("dirty_evictions", "evicted lines with dirty sectors", "lines")),
      l2_near_lookups(
          g.child("l2").counter("near_lookups", "far-partition requests handled first by a near slice", "requests")),
      l2_near_copy_hits(g.child("l2").counter(
          "near_copy_hits", "far-homed load sectors served by a copy in the SM's own partition", "sectors")),
      l2_near_copy_misses(g.child("l2").counter("near_copy_misses",
                                                "far-homed load requests sent on to their home partition", "requests")),
      l2_slice_queue_ns(
          g.child("l2").histogram("slice_queue_ns", "wait for the slice's bandwidth server", "ns", 10, 64)) {}

GpuMemorySystem::Queues MemorySystemImpl::queues() const {
  return {sim_.now(), hbm_->backlog(sim_.now()), requests_in_flight(),
          c_.ld_requests.value() + c_.st_requests.value() + c_.atom_requests.value()};
}

GpuMemorySystem::Totals MemorySystemImpl::totals() const {
  Totals t;
  t.dram_read_bytes = hbm_->read_bytes();
  t.dram_write_bytes = hbm_->write_bytes();
  t.l2_sector_hits = c_.l2_sector_hits.value();
  t.l2_sector_misses = c_.l2_sector_misses.value();
  t.l1_sector_hits = c_.l1_sector_hits.value();
  t.l1_sector_misses = c_.l1_sector_misses.value();
  t.global_requests = c_.ld_requests.value() + c_.st_requests.value() + c_.atom_requests.value();
  t.global_sectors = c_.ld_sectors.value() + c_.st_sectors.value() + c_.atom_sectors.value();
  return t;
}

// Counters that Totals does not carry, in this order (per-kernel differences from begin_kernel).
std::vector<uint64_t> MemorySystemImpl::snapshot_counters() const {
  return {c_.ld_requests.value(),     c_.ld_sectors.value(),      c_.st_requests.value(),
          c_.st_sectors.value(),      c_.l2_read_sectors.value(), c_.l2_write_sectors.value(),
          c_.l2_atom_sectors.value(), c_.l2_read_hits.value(),    c_.atom_requests.value()};
}

static double pct(uint64_t num, uint64_t den) { return den ? 100.0 * double(num) / double(den) : 0.0; }

void MemorySystemImpl::add_metrics(nlohmann::json& m, const Totals& since) const {
  Totals now = totals();
  std::vector<uint64_t> c = snapshot_counters();
  for (size_t i = 0; i < c.size(); ++i) c[i] -= snapshot_[i];
  uint64_t rd = now.dram_read_bytes - since.dram_read_bytes, wr = now.dram_write_bytes - since.dram_write_bytes;
  uint64_t l1h = now.l1_sector_hits - since.l1_sector_hits, l1m = now.l1_sector_misses - since.l1_sector_misses;
  uint64_t l2h = now.l2_sector_hits - since.l2_sector_hits, l2m = now.l2_sector_misses - since.l2_sector_misses;
  m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = c[0];
  m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = c[1];
  m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = c[2];
  m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = c[3];
  m["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] = c[8];
  m["l1tex__t_sector_hit_rate.pct"] = pct(l1h, l1h + l1m);
  m["lts__t_sectors.sum"] = l2h + l2m;
  m["lts__t_sector_hit_rate.pct"] = pct(l2h, l2h + l2m);
  m["lts__t_sectors_srcunit_tex_op_read.sum"] = c[4];
  m["lts__t_sectors_srcunit_tex_op_write.sum"] = c[5];
  m["lts__t_sectors_srcunit_tex_op_atom.sum"] = c[6];
  m["lts__t_sector_op_read_hit_rate.pct"] = pct(c[7], c[4]);
  m["dram__bytes_read.sum"] = rd;
  m["dram__bytes_write.sum"] = wr;
  m["dram__bytes.sum"] = rd + wr;
  double elapsed_ns = double(sim_.now() - kernel_start_) / double(kTicksPerNs);
  double per_s = elapsed_ns > 0 ? double(rd + wr) / elapsed_ns * 1e9 : 0.0;
  m["dram__bytes.sum.per_second"] = per_s;
  m["dram__throughput.avg.pct_of_peak_sustained_elapsed"] =
      elapsed_ns > 0 ? 100.0 * double(rd + wr) / elapsed_ns / hbm_->peak_bytes_per_ns() : 0.0;
}

}  // namespace gtsim::mem
