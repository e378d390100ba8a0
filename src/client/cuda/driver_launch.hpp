// Launching a driver function: the one path of cuLaunchKernel,
// cuLaunchCooperativeKernel and the legacy cuLaunchGrid.
#pragma once
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

namespace rgpu::client {

// Arguments as cuLaunchKernel takes them (params or extra); a cooperative
// launch waits for the server's answer, so that its errors are its own.
CUresult launch_function(CUfunction f, dim3 grid, dim3 block, unsigned shared_mem, CUstream stream, void** params,
                         void** extra, bool cooperative);

}  // namespace rgpu::client
