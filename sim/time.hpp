// Simulated time: integer picoseconds, and clock domains converting cycles <-> ticks.
#pragma once

#include <cstdint>
#include <limits>

namespace gtsim {

using Tick = uint64_t;  // picoseconds since the start of the simulation
inline constexpr Tick kTickMax = std::numeric_limits<Tick>::max();
inline constexpr Tick kTicksPerNs = 1000;
inline constexpr Tick kTicksPerUs = 1000 * kTicksPerNs;

// A clock of fixed frequency, kept as an integer number of kHz so that conversions are exact
// rationals: cycle n starts at tick round(n * 1e9 / f_khz). No drift over billions of cycles.
class ClockDomain {
 public:
  ClockDomain() = default;
  explicit ClockDomain(double mhz);

  double mhz() const { return double(khz_) / 1000.0; }
  // Tick at which `cycle` begins.
  Tick cycle_start(uint64_t cycle) const {
    if (cycle >= origin_cycle_) return origin_tick_ + ticks(cycle - origin_cycle_);
    Tick back = ticks(origin_cycle_ - cycle);
    return back < origin_tick_ ? origin_tick_ - back : 0;
  }
  // Duration of `cycles` cycles in ticks (rounded to the nearest picosecond).
  Tick ticks(uint64_t cycles) const {
    return Tick((static_cast<unsigned __int128>(cycles) * kPsPerSecondKhz + khz_ / 2) / khz_);
  }
  // Fractional cycles -> ticks.
  Tick ticks(double cycles) const { return Tick(cycles * 1e9 / double(khz_) + 0.5); }
  // The cycle in progress at tick t.
  uint64_t cycle_at(Tick t) const {
    if (t >= origin_tick_)
      return origin_cycle_ + uint64_t((static_cast<unsigned __int128>(t - origin_tick_) * khz_) / kPsPerSecondKhz);
    uint64_t back =
        uint64_t(((static_cast<unsigned __int128>(origin_tick_ - t) * khz_) + kPsPerSecondKhz - 1) / kPsPerSecondKhz);
    return back < origin_cycle_ ? origin_cycle_ - back : 0;
  }
  // The first cycle boundary at or after t.
  Tick next_edge(Tick t) const {
    uint64_t c = cycle_at(t);
    Tick s = cycle_start(c);
    return s >= t ? s : cycle_start(c + 1);
  }
  // Ticks -> cycles as a real number (for reports).
  double cycles(Tick t) const { return double(t) * double(khz_) / 1e9; }
  // Changes the frequency from the first cycle boundary at or after `at` on: cycles keep counting
  // from there at the new rate (a clock that drops under load between kernels).
  void retime(double mhz, Tick at);

 private:
  static constexpr uint64_t kPsPerSecondKhz = 1'000'000'000ull;  // ps per cycle = 1e9 / f_kHz
  uint64_t khz_ = 1'000'000;                                     // 1 GHz
  Tick origin_tick_ = 0;  // cycle origin_cycle_ starts here (both 0 until retimed)
  uint64_t origin_cycle_ = 0;
};

}  // namespace gtsim
