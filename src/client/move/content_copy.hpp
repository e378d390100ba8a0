// A moving session's device memory copied from its old worker to its new
// one, at the same addresses (docs/migration.md). The bytes cross this
// process: no worker reaches another. Several threads each move pieces,
// each on its own connections, so one's read from the old worker overlaps
// another's write to the new and a tcp session moves as fast as a striped
// copy. A side that shares memory with this process (shm) copies by its
// GPU's own DMA into or out of a buffer it maps, nothing on its socket.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace rgpu::client {

class Session;

struct MovedRange {
  uint64_t base;
  uint64_t size;
};

// Copies every range from `from` (its device `remote`) to `to` (its GPU
// `gpu`); the bytes copied. Throws std::runtime_error, saying what failed.
uint64_t copy_contents(Session& from, int remote, Session& to, int gpu, std::span<const MovedRange> ranges);

// One read or write of device memory through a session's connection.
void read_device(Session& from, int remote, uint64_t address, void* dst, size_t n);
void write_device(Session& to, int gpu, uint64_t address, const void* src, size_t n);

}  // namespace rgpu::client
