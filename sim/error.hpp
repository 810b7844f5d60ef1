// User-facing errors: bad input is reported as `file:line:col: what is wrong, what was expected`
// and the CLI exits with code 2. Library code throws these; it never calls exit() or asserts on input.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gtsim {

struct SourcePos {
  std::string file;  // path as given by the user ("<--set>" for command-line overrides)
  int line = 0;      // 1-based; 0 when unknown
  int col = 0;       // 1-based; 0 when unknown
  std::string str() const;  // "file:line:col" (omits the parts that are unknown)
};

// One problem in the user's input.
struct Diagnostic {
  SourcePos pos;
  std::string message;
  std::string str() const { return pos.str() + ": " + message; }
};

// Thrown for bad input (configs, kernels, workloads, command-line values). Carries one or more
// diagnostics; what() is all of them joined by newlines.
class InputError : public std::runtime_error {
 public:
  explicit InputError(Diagnostic d);
  explicit InputError(std::vector<Diagnostic> ds);
  InputError(SourcePos pos, const std::string& message) : InputError(Diagnostic{std::move(pos), message}) {}
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

// Thrown when a simulation cannot complete: deadlock, watchdog limits. The message says which
// warps wait where, at what simulated time.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gtsim
