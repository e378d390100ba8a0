// Zero-copy mapped host memory. Over shm, page-locked memory from
// cudaHostAlloc is shared memory the server has mapped and pinned, so the
// GPU reaches it in place: its device address is real and kernels' writes
// land in the application's memory. Over other transports the GPU cannot
// reach client memory and mapping fails with cudaErrorNotSupported.
#pragma once
#include <cstdint>
#include <optional>

namespace rgpu::client {

// Why mapping is refused (logged with the refused call's name).
extern const char* const kMappedNeedsShm;

// cudaFreeHost of a range: drops the device addresses handed out for it.
void forget_mapped(uint64_t host_base);

// The device address handed out for the host address, and the other way
// round (pointer attributes report both sides of mapped memory).
std::optional<uint64_t> mapped_device_address(uint64_t host);
std::optional<uint64_t> mapped_host_address(uint64_t device);

}  // namespace rgpu::client
