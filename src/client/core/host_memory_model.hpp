// What a remote GPU can do with the application's host memory, which differs
// from what it can do on its own host: it never reaches the application's
// pageable memory or registered buffers, and over tcp no page-locked memory
// is mapped and there is no managed memory at all. The device facts that
// describe this (cudaDeviceProp fields, device attributes) are answered for
// rgpu's model, so programs choose a path that works instead of failing.
#pragma once
#include <cuda_runtime_api.h>

#include <optional>

namespace rgpu::client {

// shares_memory: the device's session maps the application's page-locked
// memory (shm).
void adjust_host_memory_facts(cudaDeviceProp& p, bool shares_memory);

// The value of an attribute rgpu answers itself, or nothing for the GPU's own.
std::optional<int> host_memory_attribute(cudaDeviceAttr attr, bool shares_memory);

}  // namespace rgpu::client
