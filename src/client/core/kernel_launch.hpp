// What every kernel launch does before it is posted, whichever API it came
// from: check the configuration as the local runtime does, and pack the
// arguments at the offsets the server's driver reported.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "client/core/module_registry.hpp"

namespace rgpu::client {

// CUDA 13 reports every bad grid or block as cudaErrorInvalidValue (seen on the H100).
cudaError_t check_launch_config(const cudaDeviceProp& p, dim3 grid, dim3 block);
// args[i] points at parameter i; null is accepted only for a kernel without parameters.
cudaError_t pack_kernel_args(const LoadedKernel& k, void** args, std::vector<uint8_t>* packed);
// cudaErrorNotSupported, logged, when a pointer-sized argument points into the
// application's page-locked memory that the server's GPU cannot reach (any of
// it over tcp; registered memory over shm): the kernel would end the context
// with an illegal address instead.
cudaError_t check_host_pointer_args(const LoadedKernel& k, const std::vector<uint8_t>& packed,
                                    bool shares_memory);

}  // namespace rgpu::client
