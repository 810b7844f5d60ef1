// Typed statistics, registered beside the state they count. The hot path increments a member
// (Counter::operator+=); nothing is looked up by string per event. A StatGroup tree mirrors the
// component hierarchy and is written as hierarchical JSON by component path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gtsim {

class Stat {
 public:
  Stat(std::string name, std::string desc, std::string unit)
      : name_(std::move(name)), desc_(std::move(desc)), unit_(std::move(unit)) {}
  virtual ~Stat() = default;
  const std::string& name() const { return name_; }
  const std::string& desc() const { return desc_; }
  const std::string& unit() const { return unit_; }
  virtual nlohmann::json value_json() const = 0;
  virtual void reset() = 0;

 private:
  std::string name_, desc_, unit_;
};

// A monotonically growing count (events, bytes, cycles busy).
//
// Sampled simulation (models/gpu/sampler.hpp) needs to know how much of a count is the work of a
// kernel's main loop, which repeats and may be skipped, and how much is once-per-CTA work around it
// (prologue, epilogue), which is always simulated. While a `LoopWork` scope is open on this thread
// (the SM issuing an instruction inside the sampling loop, the memory system handling a request of
// one), increments also go to `loop_value()`. Counters of elapsed time (cycles an SM was active)
// are `time_like`: they grow with time, whatever the work.
class Counter final : public Stat {
 public:
  using Stat::Stat;
  Counter& operator+=(uint64_t v) {
    v_ += v;
    if (loop_work_) loop_v_ += v;
    return *this;
  }
  Counter& operator++() { return *this += 1; }
  uint64_t value() const { return v_; }
  uint64_t loop_value() const { return loop_v_; }
  void set(uint64_t v) { v_ = v; }
  // Adds to the count without attributing it to loop work (extrapolated, warmed work).
  void add_unattributed(uint64_t v) { v_ += v; }
  bool time_like() const { return time_like_; }
  Counter& set_time_like() {
    time_like_ = true;
    return *this;
  }
  nlohmann::json value_json() const override { return v_; }
  void reset() override { v_ = loop_v_ = 0; }

  // Whether this thread's increments are loop work now; LoopWork sets it for a scope.
  static bool loop_work() { return loop_work_; }
  class LoopWork {
   public:
    explicit LoopWork(bool on) : prev_(loop_work_) { loop_work_ = on; }
    ~LoopWork() { loop_work_ = prev_; }
    LoopWork(const LoopWork&) = delete;
    LoopWork& operator=(const LoopWork&) = delete;

   private:
    bool prev_;
  };

 private:
  uint64_t v_ = 0, loop_v_ = 0;
  bool time_like_ = false;
  static inline thread_local bool loop_work_ = false;
};

// A sampled distribution with fixed-width buckets plus count, sum, min, max.
class Histogram final : public Stat {
 public:
  Histogram(std::string name, std::string desc, std::string unit, double bucket_width, size_t buckets)
      : Stat(std::move(name), std::move(desc), std::move(unit)), width_(bucket_width), buckets_(buckets, 0) {}
  void sample(double v, uint64_t weight = 1);
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double mean() const { return count_ ? sum_ / double(count_) : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  nlohmann::json value_json() const override;
  void reset() override;

 private:
  double width_;
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

// A value computed from other stats when read (hit rate, utilization).
class Formula final : public Stat {
 public:
  Formula(std::string name, std::string desc, std::string unit, std::function<double()> f)
      : Stat(std::move(name), std::move(desc), std::move(unit)), f_(std::move(f)) {}
  double value() const { return f_(); }
  nlohmann::json value_json() const override { return f_(); }
  void reset() override {}

 private:
  std::function<double()> f_;
};

// A node of the stats tree (one per component). Owns its stats and child groups.
class StatGroup {
 public:
  explicit StatGroup(std::string name = "") : name_(std::move(name)) {}
  StatGroup(const StatGroup&) = delete;
  StatGroup& operator=(const StatGroup&) = delete;

  const std::string& name() const { return name_; }
  StatGroup& child(const std::string& name);  // get or create
  Counter& counter(const std::string& name, const std::string& desc, const std::string& unit);
  Histogram& histogram(const std::string& name, const std::string& desc, const std::string& unit, double width,
                       size_t buckets);
  Formula& formula(const std::string& name, const std::string& desc, const std::string& unit,
                   std::function<double()> f);

  // Finds a stat by slash path relative to this group ("l2/slice3/hits"); nullptr if absent.
  const Stat* find(const std::string& path) const;
  // Sum of all counters named `name` in this subtree (e.g. "dram_read_bytes" over every channel).
  uint64_t sum_counters(const std::string& name) const;
  // Every counter of this subtree, depth first in name order (sampled simulation extrapolates them).
  void collect_counters(std::vector<Counter*>& out);

  // {"stat": value, ..., "child": {...}}; with_meta adds {"value","desc","unit"} objects instead.
  nlohmann::json to_json(bool with_meta = false) const;
  void reset();

 private:
  std::string name_;
  std::vector<std::unique_ptr<Stat>> stats_;
  std::map<std::string, std::unique_ptr<StatGroup>> children_;
};

}  // namespace gtsim
