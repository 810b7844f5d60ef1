// HBM behind the L2: an interface with variants registered by name (`hbm.impl`).
//
// access() is called in nondecreasing arrival order (from the L2 slices' events) and returns
// the tick at which the data is back at the L2 (reads) or has been written (writes). Bytes are
// rounded up to whole bursts by the caller. Each variant keeps its own bandwidth and bank state
// as next-free times: no per-cycle ticking.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/mem/mem_specs.hpp"
#include "sim/stats.hpp"
#include "sim/time.hpp"

namespace gtsim::mem {

class HbmModel {
 public:
  explicit HbmModel(StatGroup& stats);
  virtual ~HbmModel() = default;
  // `addr`: byte address of the first burst; `bytes`: a multiple of the burst size.
  Tick access(Tick arrival, uint64_t addr, uint32_t bytes, bool write);
  uint64_t read_bytes() const { return read_bytes_.value(); }
  uint64_t write_bytes() const { return write_bytes_.value(); }
  // Counts a write-back that took no time here (sampled simulation: it happened in skipped time).
  void count_write(uint32_t bytes) {
    write_bytes_ += bytes;
    ++writes_;
  }
  // Peak rate used for dram__throughput (bytes per ns).
  virtual double peak_bytes_per_ns() const = 0;
  // The work queued at `now`: how long, on average over its data buses, until each is free (0 when
  // idle). Writes are counted at arrival, so a backlog that grows is traffic not yet paid for in time.
  virtual Tick backlog(Tick now) const = 0;
  // Adds `extra` to every bus's backlog (sampled simulation: what skipped work left queued).
  virtual void queue(Tick now, Tick extra) = 0;

 protected:
  // Returns the completion tick and the bytes that were queued ahead of this access on its server.
  virtual Tick serve(Tick arrival, uint64_t addr, uint32_t bytes, bool write, double& bytes_ahead) = 0;

 private:
  Counter& read_bytes_;
  Counter& write_bytes_;
  Counter& reads_;
  Counter& writes_;
  Histogram& read_latency_ns_;  // loaded latency: arrival at HBM to data back at L2
  Histogram& queue_bytes_;      // bytes queued ahead of each access (queue occupancy)
};

using HbmFactory = std::function<std::unique_ptr<HbmModel>(const HbmSpecs&, StatGroup&)>;

// Registers the built-in variants ("bandwidth_server", "banked"); idempotent. Explicit rather
// than static-initializer registration so that it survives static linking.
void register_hbm_models();
void register_hbm_model(const std::string& name, HbmFactory f);
std::vector<std::string> registered_hbm_models();
// `specs.impl` must be registered (HbmSpecs::parse checks it and lists the registered names).
std::unique_ptr<HbmModel> make_hbm_model(const HbmSpecs& specs, StatGroup& stats);

}  // namespace gtsim::mem
