// What every API rgpu does not implement yet does: logs its name once and
// returns cudaErrorNotSupported.
#pragma once
#include <cuda_runtime_api.h>

namespace rgpu::client {
cudaError_t unsupported(const char* name);
}
