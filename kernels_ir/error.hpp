// IR errors are the project's input errors (sim/error.hpp): `file:line:col: what is wrong, what was expected`.
#pragma once

#include "sim/error.hpp"

namespace gtsim::ir {
using Error = gtsim::InputError;
}  // namespace gtsim::ir
