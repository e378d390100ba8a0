// Host and GPU writes to one chunk of software-coherent memory, merged: the
// host changed its copy since it was fetched while the GPU may have been
// running, and the GPU may have changed its own meanwhile.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rgpu::client {

// Lays the host's changes (host against fetched) over the GPU's bytes as
// they are now: every byte the host left alone takes the GPU's value.
// Returns how many bytes both sides changed (the host's value kept): those
// writes could not be made coherent.
size_t merge_concurrent_writes(const uint8_t* fetched, const uint8_t* now, uint8_t* host, size_t n);

}  // namespace rgpu::client
