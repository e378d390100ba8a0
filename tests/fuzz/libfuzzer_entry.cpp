// libFuzzer's entry point for one target, chosen at build time
// (RGPU_FUZZ_TARGET names its body in fuzz_targets.hpp).
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return rgpu::fuzz::RGPU_FUZZ_TARGET(data, size);
}
