// Managed memory where the GPU cannot reach the application's pages (a
// server over tcp): the allocation is device memory, and this process keeps
// a copy of it at the same address, kept coherent in software the way CUDA
// did on GPUs without concurrent managed access. The range is reserved with
// no access; the first host read of a 1 MiB chunk fetches it from the GPU
// (read-only), the first write makes it writable and dirty; before any call
// that may let a GPU touch memory, dirty chunks go back to the GPU and every
// host copy is dropped. Host access while GPU work runs is the application's
// race, as on such GPUs (rgpu reports concurrentManagedAccess 0 there).
#pragma once
#include <cstddef>
#include <cstdint>

namespace rgpu::client::managed_coherence {

// Reserves [base, base + size) here for device memory at the same address;
// false when this process already uses an address in it.
bool add(uint64_t base, size_t size);
// Drops the range and its host copies.
void remove(uint64_t base);
bool contains(uint64_t ptr);

}  // namespace rgpu::client::managed_coherence
