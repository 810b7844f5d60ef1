// The fuzz bodies: one per input grammar (docs/fuzzing.md). Each takes any bytes, runs the parser,
// verifier and binder on them (never a simulation), returns 0 for success and for gtsim::InputError
// (bad input is expected; for configs also gtsim::LimitError, a machine above the model-state limit
// refused before it is built), and lets anything else escape: a crash, a sanitizer report or another
// exception is a bug. The libFuzzer executables (fuzz/libfuzzer_main.cpp) and the regression replay
// test (tests/fuzz) both call these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gtsim::fuzz {
// Inputs larger than this are skipped: the parsers' cost grows with the input, and the interesting
// structure fits in far less.
constexpr size_t kMaxInputBytes = 64 * 1024;

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return size ? std::string_view(reinterpret_cast<const char*>(data), size) : std::string_view();
}
}  // namespace gtsim::fuzz

int gtsim_fuzz_kernel(const uint8_t* data, size_t size);    // .kir: parse, verify, print round trip, bind
int gtsim_fuzz_config(const uint8_t* data, size_t size);    // config YAML with base: and --set, then the specs
int gtsim_fuzz_workload(const uint8_t* data, size_t size);  // workload YAML, or one elementwise expression
int gtsim_fuzz_tpu(const uint8_t* data, size_t size);       // tpu_kernel: parse, dialect verifier, core program
