// Memory registration for shm: page-locked memory the client allocates lives
// in a memfd that the server maps too, so copies from and to it are the
// GPU's own DMA with no copy through the socket.
//
// A file a peer could shrink would kill its mapper with SIGBUS at the next
// touch of a page past the new end. So shared memory is sealed at its size
// by its creator, and a mapper refuses any descriptor that is not.
#pragma once
#include <cstddef>
#include <string>

namespace rgpu::transport {

struct SharedMemory {
  void* base = nullptr;
  size_t size = 0;
  int fd = -1;
};

// A memfd of `size` bytes, sealed against shrinking and growing; -1 on
// failure (errno says why).
int create_sealed_memfd(const char* name, size_t size);
// Client side: new shared memory (a sealed memfd, mapped); throws TransportError.
SharedMemory create_shared_memory(size_t size);
// Why the descriptor must not be mapped for `size` bytes: not a memfd sealed
// against shrinking and growing (F_GET_SEALS), or shorter than that. Empty:
// it is safe to map.
std::string unsafe_to_map(int fd, size_t size);
// Maps a client's memory file, taking the descriptor (which it closes): at
// `at` where it is given and free in this process (the application's own
// address, so that one pointer names the memory on both sides), else
// anywhere, or nowhere if `exact`. Null on failure, or when unsafe_to_map
// refuses it (the reason goes to *why when given).
void* map_shared_memory(int fd, size_t size, void* at = nullptr, bool exact = false, std::string* why = nullptr);
void release_shared_memory(const SharedMemory& m);

}  // namespace rgpu::transport
