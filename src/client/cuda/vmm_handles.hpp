// The handles of virtual memory management (virtual_memory.cpp) as the
// generated driver stubs need them: the client numbers the application holds
// stand for handles of one server's driver.
#pragma once
#include "client/cuda/cuda_api.hpp"

#include <cstdint>

namespace rgpu::client {

// The server's handle behind `handle` and the device it was made on: a
// physical allocation of cuMemCreate, or with `multicast` a multicast object
// of cuMulticastCreate. False for any other handle.
bool vmm_handle_remote(CUmemGenericAllocationHandle handle, bool multicast, int* device, uint64_t* remote);

}  // namespace rgpu::client
