// Warp schedulers: one per SM sub-partition. Each cycle the sub-partition asks its scheduler for
// the order in which to try its resident warps; the first that can issue does. Variants are
// registered by name (`sm.warp_scheduler` in the config) in register_all().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gtsim::gpu {

class WarpScheduler {
 public:
  virtual ~WarpScheduler() = default;
  // Fills `order` (cleared first) with the warps of `age_order` (oldest first) in this cycle's
  // priority order. Warp ids are the SM's warp slots.
  virtual void prioritize(std::span<const uint16_t> age_order, std::vector<uint16_t>& order) = 0;
  // The warp that issued this cycle (greedy and round-robin state).
  virtual void issued(uint16_t warp) = 0;
};

// Registry of scheduler variants by name. register_all() adds the built-in ones (gto, lrr);
// it is explicit so that registration survives static linking.
class WarpSchedulerRegistry {
 public:
  using Factory = std::function<std::unique_ptr<WarpScheduler>()>;
  static WarpSchedulerRegistry& instance();
  void add(const std::string& name, Factory f);
  std::vector<std::string> names() const;
  // Throws std::out_of_range for an unknown name (callers check names() first).
  std::unique_ptr<WarpScheduler> create(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, Factory>> entries_;
};

// Registers gto and lrr (idempotent, thread-safe).
void register_all();

}  // namespace gtsim::gpu
