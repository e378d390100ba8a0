// Memory registration for shm: page-locked memory the client allocates lives
// in a memfd that the server maps too, so copies from and to it are the
// GPU's own DMA with no copy through the socket.
#pragma once
#include <cstddef>

namespace rgpu::transport {

struct SharedMemory {
  void* base = nullptr;
  size_t size = 0;
  int fd = -1;
};

// Client side: new shared memory; throws TransportError.
SharedMemory create_shared_memory(size_t size);
// Either side: maps a received descriptor (which it then owns and closes).
// Maps a client's memory file, taking the descriptor: at `at` where it is
// given and free in this process (the application's own address, so that one
// pointer names the memory on both sides), else anywhere, or nowhere if
// `exact`. Null on failure.
void* map_shared_memory(int fd, size_t size, void* at = nullptr, bool exact = false);
void release_shared_memory(const SharedMemory& m);

}  // namespace rgpu::transport
