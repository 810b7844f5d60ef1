#include "models/gpu/warp_scheduler.hpp"

#include <mutex>
#include <stdexcept>

namespace gtsim::gpu {
namespace {

// Greedy-then-oldest (Rogers et al., MICRO 2012; GPGPU-Sim's default): keep issuing from the
// warp that issued last while it can; otherwise the oldest ready warp.
class GtoScheduler final : public WarpScheduler {
 public:
  uint16_t preferred() const override { return last_; }
  size_t start(std::span<const uint16_t>) const override { return 0; }
  void issued(uint16_t warp) override { last_ = warp; }

 private:
  uint16_t last_ = kNoWarp;
};

// Loose round-robin: start after the warp that issued last, wrapping around.
class LrrScheduler final : public WarpScheduler {
 public:
  uint16_t preferred() const override { return kNoWarp; }
  size_t start(std::span<const uint16_t> age_order) const override {
    for (size_t i = 0; i < age_order.size(); ++i)
      if (age_order[i] == last_) return i + 1 == age_order.size() ? 0 : i + 1;
    return 0;
  }
  void issued(uint16_t warp) override { last_ = warp; }

 private:
  uint16_t last_ = kNoWarp;
};

}  // namespace

WarpSchedulerRegistry& WarpSchedulerRegistry::instance() {
  static WarpSchedulerRegistry r;
  return r;
}

void WarpSchedulerRegistry::add(const std::string& name, Factory f) {
  for (auto& e : entries_)
    if (e.first == name) {
      e.second = std::move(f);
      return;
    }
  entries_.emplace_back(name, std::move(f));
}

std::vector<std::string> WarpSchedulerRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.first);
  return out;
}

std::unique_ptr<WarpScheduler> WarpSchedulerRegistry::create(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.first == name) return e.second();
  throw std::out_of_range("unknown warp scheduler " + name);
}

void register_all() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& r = WarpSchedulerRegistry::instance();
    r.add("gto", [] { return std::make_unique<GtoScheduler>(); });
    r.add("lrr", [] { return std::make_unique<LrrScheduler>(); });
  });
}

}  // namespace gtsim::gpu
