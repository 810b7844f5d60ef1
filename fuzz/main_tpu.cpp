// libFuzzer entry point of the tpu target; its body (gtsim_fuzz_tpu) is shared with the replay test.
#include "fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return gtsim_fuzz_tpu(data, size); }
