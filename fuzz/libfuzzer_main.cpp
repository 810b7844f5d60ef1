// The libFuzzer entry point of one target: GTSIM_FUZZ_BODY names the body (fuzz/CMakeLists.txt).
#include "fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return GTSIM_FUZZ_BODY(data, size); }
