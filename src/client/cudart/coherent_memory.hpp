// Device memory the application also uses at the same address, where the GPU
// cannot reach the application's pages (a server over tcp): managed memory,
// and mapped page-locked host memory (its device pointer is its host
// pointer, as under unified addressing); and page-locked memory adopted
// once a GPU is handed it, whose device memory lies at another address.
// This process keeps a copy of it,
// coherent in software the way CUDA kept managed memory on GPUs without
// concurrent managed access. The range is reserved here with no access; the
// first host read of a 1 MiB chunk fetches it from the GPU (read-only), the
// first write makes it writable and dirty; before any call that may let a GPU
// touch memory, dirty chunks go back to the GPU and every host copy is
// dropped. Fetches and write-backs run on a stream of their own that waits
// for no other work, so a kernel that waits for a flag the host writes gets
// it at the host's next CUDA call instead of deadlocking the copy. Host
// access while GPU work runs is the application's race, as on such GPUs: a
// chunk fetched while asynchronous work was outstanding keeps, at
// write-back, the GPU's changes to bytes the host left alone, and bytes
// both changed are logged once (concurrent_writes.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace rgpu::client::coherent_memory {

// Device memory of the current device, `size` bytes from a page boundary
// *base, reserved at the same address here. cudaErrorMemoryAllocation when
// this process already uses an address in it. `server_wide`: every GPU of
// the device's server reaches it (device_backing.hpp).
cudaError_t allocate(size_t size, bool server_wide, uint64_t* base);
// Page-locked memory this process already holds at [base, base + size)
// (base page-aligned) made coherent device memory of the current device,
// which every GPU of its server reaches: its contents go there, and the
// host's pages fetch them back when touched.
// *device: the device memory's address.
cudaError_t adopt(uint64_t base, size_t size, uint64_t* device);
// Drops the range at base and its host copies, and frees its device memory.
cudaError_t release(uint64_t base);
// A module's or library's managed variable, which the server's driver
// allocated at [address, address + size): the pages holding it are reserved
// here at the same address and kept coherent like the rest, but only its
// bytes move, and its memory is the driver's (never freed here). Variables
// sharing pages share one range. cudaErrorMemoryAllocation, logged, when
// this process uses an address of those pages.
cudaError_t add_variable(uint64_t address, size_t size);
// The variable's module is gone: its bytes are no longer kept here, and
// pages holding no other variable are given back.
void remove_variable(uint64_t address);
bool contains(uint64_t ptr);

}  // namespace rgpu::client::coherent_memory
