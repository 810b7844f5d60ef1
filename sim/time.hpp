// Simulated time: integer picoseconds, and clock domains converting cycles <-> ticks.
#pragma once

#include <cstdint>
#include <limits>

namespace gtsim {

using Tick = uint64_t;  // picoseconds since the start of the simulation
inline constexpr Tick kTickMax = std::numeric_limits<Tick>::max();
inline constexpr Tick kTicksPerNs = 1000;
inline constexpr Tick kTicksPerUs = 1000 * kTicksPerNs;

// A clock of fixed frequency. Cycle n starts at tick round(n * period). The period is kept in
// femtoseconds so that 1410 MHz or 1980 MHz accumulate no drift over billions of cycles.
class ClockDomain {
 public:
  ClockDomain() = default;
  explicit ClockDomain(double mhz);

  double mhz() const { return mhz_; }
  // Tick at which `cycle` begins.
  Tick cycle_start(uint64_t cycle) const { return (cycle * period_fs_ + 500) / 1000; }
  // Duration of `cycles` cycles in ticks (rounded to the nearest picosecond).
  Tick ticks(uint64_t cycles) const { return cycle_start(cycles); }
  // Fractional cycles -> ticks.
  Tick ticks(double cycles) const { return Tick(cycles * double(period_fs_) / 1000.0 + 0.5); }
  // The cycle in progress at tick t.
  uint64_t cycle_at(Tick t) const { return (t * 1000) / period_fs_; }
  // The first cycle boundary at or after t.
  Tick next_edge(Tick t) const {
    uint64_t c = cycle_at(t);
    Tick s = cycle_start(c);
    return s >= t ? s : cycle_start(c + 1);
  }
  // Ticks -> cycles as a real number (for reports).
  double cycles(Tick t) const { return double(t) * 1000.0 / double(period_fs_); }
  uint64_t period_fs() const { return period_fs_; }

 private:
  double mhz_ = 1000.0;
  uint64_t period_fs_ = 1'000'000;  // 1 GHz
};

}  // namespace gtsim
