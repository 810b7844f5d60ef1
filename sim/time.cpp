#include "sim/time.hpp"

#include <cmath>
#include <stdexcept>

namespace gtsim {

ClockDomain::ClockDomain(double mhz) {
  if (!(mhz > 0.0)) throw std::invalid_argument("clock frequency must be positive");
  khz_ = uint64_t(std::llround(mhz * 1000.0));
}

}  // namespace gtsim
