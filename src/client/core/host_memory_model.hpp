// What a remote GPU can do with the application's host memory, which differs
// from what it can do on its own host: it never reaches the application's
// pageable memory or registered buffers, and over tcp managed and mapped
// memory are device memory kept coherent with the application's copy in
// software, not concurrently accessible. The device facts that
// describe this (cudaDeviceProp fields, device attributes) are answered for
// rgpu's model, so programs choose a path that works instead of failing.
// File descriptors cross between application and server only over shm, so
// elsewhere no POSIX descriptor or dma-buf handle type is offered either.
#pragma once
#include <cuda_runtime_api.h>

#include <optional>

namespace rgpu::client {

// Which page-locked memory a GPU reaches (logged where memory is refused).
extern const char* const kHostMemoryReach;

// shares_memory: the device's session maps the application's page-locked
// memory (shm).
void adjust_host_memory_facts(cudaDeviceProp& p, bool shares_memory);

// The value of an attribute rgpu answers itself, or nothing for the GPU's own.
std::optional<int> host_memory_attribute(cudaDeviceAttr attr, bool shares_memory);

// The GPU's `value` of `attr` as the application sees it: dma-buf
// descriptors taken out when they cannot reach it (POSIX descriptor
// shareable handles reach it on any transport: shareable_handle.hpp).
int descriptor_handle_attribute(cudaDeviceAttr attr, int value, bool shares_memory);

}  // namespace rgpu::client
