#include "models/mem/hbm.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

#include "sim/simulation.hpp"

namespace gtsim::mem {

HbmModel::HbmModel(StatGroup& stats)
    : read_bytes_(stats.counter("dram_read_bytes", "bytes read from DRAM (bursts)", "bytes")),
      write_bytes_(stats.counter("dram_write_bytes", "bytes written to DRAM (dirty L2 evictions, bursts)", "bytes")),
      reads_(stats.counter("reads", "read accesses", "accesses")),
      writes_(stats.counter("writes", "write accesses", "accesses")),
      read_latency_ns_(stats.histogram("read_latency_ns", "loaded read latency, arrival to data at L2", "ns", 50, 64)),
      queue_bytes_(stats.histogram("queue_bytes", "bytes queued ahead of an access on its server", "bytes", 4096, 64)) {
}

Tick HbmModel::access(Tick arrival, uint64_t addr, uint32_t bytes, bool write) {
  double ahead = 0;
  Tick done = serve(arrival, addr, bytes, write, ahead);
  queue_bytes_.sample(ahead);
  if (write) {
    write_bytes_ += bytes;
    ++writes_;
  } else {
    read_bytes_ += bytes;
    ++reads_;
    read_latency_ns_.sample(double(done - arrival) / double(kTicksPerNs));
  }
  return done;
}

namespace {

// The default: one server at the sustained bandwidth plus a fixed latency. Queueing in the
// server is the loaded latency (it rises with the bytes queued ahead).
class BandwidthServerHbm final : public HbmModel {
 public:
  BandwidthServerHbm(const HbmSpecs& s, StatGroup& stats)
      : HbmModel(stats),
        server_(s.bandwidth_gbps),
        latency_(Tick(s.latency_ns * kTicksPerNs + 0.5)),
        rate_(s.bandwidth_gbps),
        mix_overhead_(s.mixed_traffic_overhead) {}
  double peak_bytes_per_ns() const override { return rate_; }
  Tick backlog(Tick now) const override { return server_.next_free() > now ? server_.next_free() - now : 0; }
  void queue(Tick now, Tick extra) override { server_.queue(now, extra); }

 protected:
  Tick serve(Tick arrival, uint64_t, uint32_t bytes, bool write, double& ahead) override {
    Tick start = arrival > server_.next_free() ? arrival : server_.next_free();
    ahead = double(start - arrival) * rate_ / double(kTicksPerNs);
    uint64_t cost = bytes;
    if (mix_overhead_ > 0) {  // the write fraction of the last ~kMixWindow bytes, then the turnaround cost
      double keep = std::exp(-double(bytes) / kMixWindow);
      write_frac_ = write_frac_ * keep + (write ? 1.0 - keep : 0.0);
      cost = uint64_t(std::llround(double(bytes) * (1.0 + mix_overhead_ * 4.0 * write_frac_ * (1.0 - write_frac_))));
    }
    return server_.reserve(arrival, cost) + latency_;
  }

 private:
  static constexpr double kMixWindow = 1 << 20;  // bytes
  BandwidthServer server_;
  Tick latency_;
  double rate_;
  double mix_overhead_;
  double write_frac_ = 0;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, HbmFactory> factories;
};
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::unique_ptr<HbmModel> make_banked_hbm(const HbmSpecs& s, StatGroup& stats);  // hbm_banked.cpp

void register_hbm_model(const std::string& name, HbmFactory f) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().factories[name] = std::move(f);
}

void register_hbm_models() {
  register_hbm_model("bandwidth_server", [](const HbmSpecs& s, StatGroup& st) -> std::unique_ptr<HbmModel> {
    return std::make_unique<BandwidthServerHbm>(s, st);
  });
  register_hbm_model("banked", make_banked_hbm);
}

std::vector<std::string> registered_hbm_models() {
  std::lock_guard<std::mutex> lock(registry().mu);
  std::vector<std::string> out;
  for (const auto& [name, f] : registry().factories) out.push_back(name);
  return out;
}

std::unique_ptr<HbmModel> make_hbm_model(const HbmSpecs& specs, StatGroup& stats) {
  HbmFactory f;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    f = registry().factories.at(specs.impl);
  }
  return f(specs, stats);
}

}  // namespace gtsim::mem
