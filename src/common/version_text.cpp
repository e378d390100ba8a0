#include "common/version_text.hpp"

#include <cuda_runtime_api.h>

#include "common/version.hpp"
#include "protocol/wire.hpp"

namespace rgpu {

std::string version_text(const char* program) {
  return std::string(program) + " " + kVersion + " (protocol " + std::to_string(proto::kProtocolVersion) +
         ", CUDA " + std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) + ")";
}

}  // namespace rgpu
