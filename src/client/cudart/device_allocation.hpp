// Recording device memory the server allocated, in the client's memory map.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "client/core/call.hpp"

namespace rgpu::client {

// Records [ptr, ptr + size) as memory of the call's device. An address
// another server already gave out cannot name this GPU's memory too: the
// allocation is given back and the call fails rather than mix the two up.
// `graph`: the captured graph it is an allocation node of (a tag), or 0.
cudaError_t remember_allocation(Call& call, uint64_t ptr, size_t size, uint64_t graph = 0);

}  // namespace rgpu::client
