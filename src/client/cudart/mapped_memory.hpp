// Zero-copy mapped host memory. Over shm, page-locked memory from
// cudaHostAlloc is shared memory the server has mapped and pinned, so the
// GPU reaches it in place: its device address is real and kernels' writes
// land in the application's memory. Over other transports the GPU cannot
// reach client memory: memory allocated mapped (cudaHostAllocMapped,
// CU_MEMHOSTALLOC_DEVICEMAP; every page-locked allocation with
// RGPU_PAGE_LOCKED_MAPPED=1) is device memory at the same address as the
// application's, kept coherent in software (coherent_memory.hpp), so its
// device pointer is its host pointer, as under unified addressing. Other
// page-locked memory is promoted to such memory, at another device address,
// when a kernel is handed it (kernel_launch.hpp) or its device pointer is
// asked for; every GPU of that server reaches it. Memory the application
// registers has no device address there.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "client/core/memory_map.hpp"

namespace rgpu::client {

// Whether a page-locked allocation with `flags` that the GPU could not reach
// is made coherent device memory instead.
bool coherent_page_locked(unsigned flags);
// Page-locked memory as coherent device memory of the current device
// (coherent_memory::release frees it).
cudaError_t alloc_coherent(void** ptr, size_t size, unsigned flags);

// cudaFreeHost of a range: drops the device addresses handed out for it.
void forget_mapped(uint64_t host_base);

// The device address handed out for the host address, and the other way
// round (pointer attributes report both sides of mapped memory).
std::optional<uint64_t> mapped_device_address(uint64_t host);
std::optional<uint64_t> mapped_host_address(uint64_t device);
// What pointer attributes report as the device address of `host` in `range`:
// the mapped one, else the host address itself for memory rgpu allocated
// (launches promote it; NVIDIA's runtime asks every attribute at once, so
// asking does not promote); none for registered memory no server maps.
std::optional<uint64_t> page_locked_device_address(const HostRange& range, uint64_t host);

}  // namespace rgpu::client
