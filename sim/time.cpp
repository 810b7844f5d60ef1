#include "sim/time.hpp"

#include <cmath>
#include <stdexcept>

namespace gtsim {

ClockDomain::ClockDomain(double mhz) {
  if (!(mhz > 0.0)) throw std::invalid_argument("clock frequency must be positive");
  khz_ = uint64_t(std::llround(mhz * 1000.0));
}

void ClockDomain::retime(double mhz, Tick at) {
  if (!(mhz > 0.0)) throw std::invalid_argument("clock frequency must be positive");
  uint64_t khz = uint64_t(std::llround(mhz * 1000.0));
  if (khz == khz_) return;
  uint64_t c = cycle_at(at);
  if (cycle_start(c) < at) ++c;
  origin_tick_ = cycle_start(c);
  origin_cycle_ = c;
  khz_ = khz;
}

}  // namespace gtsim
