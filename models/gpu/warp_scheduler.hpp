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

inline constexpr uint16_t kNoWarp = 0xffff;

// The sub-partition tries `preferred()` first (if it is one of its ready warps), then its warps in
// age order starting at position start(age_order) and wrapping around. This covers greedy,
// oldest-first and round-robin policies without building a list per cycle.
class WarpScheduler {
 public:
  virtual ~WarpScheduler() = default;
  virtual uint16_t preferred() const = 0;                            // kNoWarp: none
  virtual size_t start(std::span<const uint16_t> age_order) const = 0;  // index into age_order
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
