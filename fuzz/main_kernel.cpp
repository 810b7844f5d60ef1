// libFuzzer entry point of the kernel target; its body (gtsim_fuzz_kernel) is shared with the replay test.
#include "fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return gtsim_fuzz_kernel(data, size); }
