#include "transport/shm/shared_memory.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "transport/transport.hpp"

namespace rgpu::transport {

SharedMemory create_shared_memory(size_t size) {
  int fd = memfd_create("rgpu-pinned", MFD_CLOEXEC);
  if (fd < 0) throw TransportError(std::string("memfd_create: ") + strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    throw TransportError(std::string("ftruncate: ") + strerror(errno));
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    throw TransportError(std::string("mmap: ") + strerror(errno));
  }
  return SharedMemory{p, size, fd};
}

void* map_shared_memory(int fd, size_t size, void* at, bool exact) {
  struct stat st;
  // The client says how big the region is; the file must really be that big.
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < size) {
    close(fd);
    return nullptr;
  }
  void* p = MAP_FAILED;
  if (at) {
    p = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (p != MAP_FAILED && p != at) {  // kernels before 4.17 take the flag as a hint
      munmap(p, size);
      p = MAP_FAILED;
    }
  }
  if (p == MAP_FAILED && !exact) p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? nullptr : p;
}

void release_shared_memory(const SharedMemory& m) {
  if (m.base) munmap(m.base, m.size);
  if (m.fd >= 0) close(m.fd);
}

}  // namespace rgpu::transport
