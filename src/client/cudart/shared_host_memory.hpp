// Host memory shared with shm servers: each worker maps the memfd (at the
// application's address where it can) and pins it, so copies are the GPU's
// DMA and kernels reach it in place. Page-locked memory rgpu allocates is
// such a memfd from the start; memory the application registers
// (cudaHostRegister) becomes one: the whole pages covering it are replaced
// in place by a sealed memfd holding the same bytes (only private anonymous
// memory: the heap, malloc's and the program's own anonymous mappings).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace rgpu::client {

// The requests that make a worker map a memfd of the application and drop it.
struct ShareOps {
  uint16_t map;
  uint16_t unmap;
};
extern const ShareOps kPageLockedShare;  // mapped and pinned
extern const ShareOps kManagedShare;     // mapped at the same address

// Tells every sharing server to map fd at base; on failure none keeps it.
cudaError_t map_on_servers(const ShareOps& ops, uint64_t base, size_t size, int fd);
// Tells the first `count` sharing servers to drop the region at base.
void unmap_on_servers(const ShareOps& ops, uint64_t base, size_t count);
// Page-locked memory mapped and pinned by every sharing server; false when
// there is none or one refused.
bool share_with_servers(uint64_t base, size_t size, int fd);
void unshare_with_servers(uint64_t base, size_t count);

struct SharedPages {
  uint64_t base;  // page-aligned, at or below the registered pointer
  size_t size;
  int fd;
};
// Registered memory [ptr, ptr + size) made shared with every sharing server;
// none (logged) when its pages are not private anonymous memory or a server
// refused them. A thread of the application that writes those pages while
// this runs may lose the write.
std::optional<SharedPages> share_registered(void* ptr, size_t size);
// cudaHostUnregister: the servers drop the pages; the application keeps
// them, with their contents, as memory of its own.
void unshare_registered(const SharedPages& pages);
// The pages share_registered shares for [ptr, ptr + size).
SharedPages registered_pages(uint64_t ptr, size_t size, int fd);

}  // namespace rgpu::client
