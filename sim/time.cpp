#include "sim/time.hpp"

#include <cmath>
#include <stdexcept>

namespace gtsim {

ClockDomain::ClockDomain(double mhz) : mhz_(mhz) {
  if (!(mhz > 0.0)) throw std::invalid_argument("clock frequency must be positive");
  period_fs_ = uint64_t(std::llround(1e9 / mhz));  // 1e9 fs per ms / MHz = fs per cycle
}

}  // namespace gtsim
