// The detailed HBM variant (`hbm.impl: banked`): channels with their own data bus, banks with a
// row buffer (hit: tCL; closed: tRCD + tCL; conflict: tRP + tRCD + tCL), and an address mapping
// that interleaves `interleave_bytes` chunks over channels (XOR-folded, so power-of-two strides
// spread) and fills a row of one bank before moving to the next bank. The H200's real timings
// and mapping are not public: this variant becomes the default only if it validates better on
// the strided and random-access data (docs/gpu_memory.md).
#include <algorithm>
#include <vector>

#include "models/mem/hbm.hpp"
#include "sim/simulation.hpp"

namespace gtsim::mem {
namespace {

class BankedHbm final : public HbmModel {
 public:
  BankedHbm(const HbmSpecs& s, StatGroup& stats)
      : HbmModel(stats),
        spec_(s.banked),
        peak_(s.bandwidth_gbps),
        buses_(s.banked.channels, BandwidthServer(s.bandwidth_gbps / s.banked.channels)),
        banks_(size_t(s.banked.channels) * s.banked.banks_per_channel),
        row_hits_(stats.counter("row_hits", "accesses to the open row", "accesses")),
        row_misses_(stats.counter("row_misses", "accesses to a closed bank (activate)", "accesses")),
        row_conflicts_(stats.counter("row_conflicts", "accesses to another row (precharge + activate)", "accesses")) {
    t_cl_ = ns(spec_.tcl_ns);
    t_rcd_ = ns(spec_.trcd_ns);
    t_rp_ = ns(spec_.trp_ns);
    double fixed = s.latency_ns - spec_.trcd_ns - spec_.tcl_ns;
    fixed_ = ns(fixed > 0 ? fixed : 0);
    chunks_per_row_ = std::max<uint64_t>(1, spec_.row_bytes / spec_.interleave_bytes);
  }
  double peak_bytes_per_ns() const override { return peak_; }
  Tick backlog(Tick now) const override {
    Tick sum = 0;
    for (const BandwidthServer& b : buses_) sum += b.next_free() > now ? b.next_free() - now : 0;
    return buses_.empty() ? 0 : sum / Tick(buses_.size());
  }
  void queue(Tick now, Tick extra) override {
    for (BandwidthServer& b : buses_) b.queue(now, extra);
  }

 protected:
  Tick serve(Tick arrival, uint64_t addr, uint32_t bytes, bool, double& ahead) override {
    uint64_t chunk = addr / spec_.interleave_bytes;
    uint64_t fold = chunk ^ (chunk >> 7) ^ (chunk >> 13) ^ (chunk >> 19);
    uint32_t ch = uint32_t(fold % spec_.channels);
    uint64_t row_id = (chunk / spec_.channels) / chunks_per_row_;
    uint32_t bank_idx = uint32_t(row_id % spec_.banks_per_channel);
    uint64_t row = row_id / spec_.banks_per_channel;
    Bank& b = banks_[size_t(ch) * spec_.banks_per_channel + bank_idx];
    Tick t0 = std::max(arrival, b.ready);
    Tick cas;
    if (b.open && b.row == row) {
      cas = t0 + t_cl_;
      ++row_hits_;
    } else if (!b.open) {
      cas = t0 + t_rcd_ + t_cl_;
      ++row_misses_;
    } else {
      cas = t0 + t_rp_ + t_rcd_ + t_cl_;
      ++row_conflicts_;
    }
    b.open = true;
    b.row = row;
    BandwidthServer& bus = buses_[ch];
    Tick start = std::max(cas, bus.next_free());
    ahead = double(start - cas) * bus.bytes_per_ns() / double(kTicksPerNs);
    Tick done = bus.reserve(cas, bytes);
    // The next column command to this bank can issue once this one's data slot is known.
    b.ready = done > t_cl_ ? std::max(t0, done - t_cl_) : t0;
    return done + fixed_;
  }

 private:
  struct Bank {
    bool open = false;
    uint64_t row = 0;
    Tick ready = 0;
  };
  static Tick ns(double v) { return Tick(v * double(kTicksPerNs) + 0.5); }

  BankedHbmSpecs spec_;
  double peak_;
  std::vector<BandwidthServer> buses_;
  std::vector<Bank> banks_;
  Counter& row_hits_;
  Counter& row_misses_;
  Counter& row_conflicts_;
  Tick t_cl_ = 0, t_rcd_ = 0, t_rp_ = 0, fixed_ = 0;
  uint64_t chunks_per_row_ = 1;
};

}  // namespace

std::unique_ptr<HbmModel> make_banked_hbm(const HbmSpecs& s, StatGroup& stats) {
  return std::make_unique<BankedHbm>(s, stats);
}

}  // namespace gtsim::mem
