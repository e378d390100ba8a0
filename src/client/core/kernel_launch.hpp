// What every kernel launch does before it is posted, whichever API it came
// from: check the configuration as the local runtime does, and pack the
// arguments at the offsets the server's driver reported.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "client/core/memory_map.hpp"
#include "client/core/module_registry.hpp"

namespace rgpu::client {

// CUDA 13 reports every bad grid or block as cudaErrorInvalidValue (seen on the H100).
cudaError_t check_launch_config(const cudaDeviceProp& p, dim3 grid, dim3 block);
// args[i] points at parameter i; null is accepted only for a kernel without parameters.
cudaError_t pack_kernel_args(const LoadedKernel& k, void** args, std::vector<uint8_t>* packed);
// A launch's or kernel node's arguments: the driver's `extra` list when
// given ({CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE,
// &size, CU_LAUNCH_PARAM_END}, the buffer laid out as the kernel's
// parameters), else `params` as pack_kernel_args takes them.
cudaError_t pack_launch_args(const LoadedKernel& k, void** params, void** extra, std::vector<uint8_t>* packed);
// Where `device` reaches page-locked memory it cannot reach at its host
// address: promoted memory's device address (an error where that lies on
// another server), or, promoting it first, memory not yet promoted
// (mapped_memory.hpp).
using PageLockedReach = cudaError_t (*)(const HostRange& range, int device, uint64_t* device_address);
void set_page_locked_reach(PageLockedReach reach);

// Under unified addressing a kernel may dereference any page-locked host
// pointer. Each 8-byte-aligned word of the packed arguments that points into
// page-locked memory `device` cannot reach (any over tcp; registered memory
// over shm) has that allocation promoted, and every word naming promoted
// memory is rewritten to its device address. Registered memory cannot be
// promoted (it is the application's own): cudaErrorNotSupported, logged. One
// check when no such memory exists; else a map look-up per word and a reach
// per allocation named. Words naming a module variable a session move loaded
// elsewhere are rewritten to where it lies now (MemoryMap::follow_moved_variables).
cudaError_t reach_host_pointer_args(const MemoryMap& map, std::vector<uint8_t>* packed, int device,
                                    bool shares_memory);

}  // namespace rgpu::client
