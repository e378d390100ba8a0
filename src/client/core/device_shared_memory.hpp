// Memory shared with one device's server over shm and page-locked there:
// staging that the server's copies reach as host memory.
#pragma once
#include <cstddef>
#include <optional>

#include "transport/shm/shared_memory.hpp"

namespace rgpu::client {

// `bytes` of it, or nothing (logged, naming `purpose`) when the memory
// cannot be made or the server refuses it.
std::optional<transport::SharedMemory> share_with_device(int device, size_t bytes, const char* purpose);

}  // namespace rgpu::client
