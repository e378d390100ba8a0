#include "transport/shm/shared_memory.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/transport.hpp"

namespace rgpu::transport {

int create_sealed_memfd(const char* name, size_t size) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

SharedMemory create_shared_memory(size_t size) {
  int fd = create_sealed_memfd("rgpu-pinned", size);
  if (fd < 0) throw TransportError(std::string("cannot make shared memory: ") + strerror(errno));
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    throw TransportError(std::string("mmap: ") + strerror(errno));
  }
  return SharedMemory{p, size, fd};
}

std::string unsafe_to_map(int fd, size_t size) {
  // Only a memfd has seals; a file of another kind says EINVAL. Sealed
  // against shrinking, no page we map can leave the file.
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) return "not a memfd";
  if ((seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW))
    return "not sealed against shrinking and growing (F_SEAL_SHRINK | F_SEAL_GROW)";
  // A hugetlbfs memfd may run out of pages under a mapping: SIGBUS again.
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0 || fs.f_type != TMPFS_MAGIC) return "not ordinary shared memory (tmpfs)";
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < size)
    return "shorter than the " + std::to_string(size) + " bytes to map";
  return "";
}

void* map_shared_memory(int fd, size_t size, void* at, bool exact, std::string* why) {
  if (std::string unsafe = unsafe_to_map(fd, size); !unsafe.empty()) {
    close(fd);
    if (why) *why = std::move(unsafe);
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
  if (p == MAP_FAILED && why) *why = std::string("mmap: ") + strerror(errno);
  close(fd);
  return p == MAP_FAILED ? nullptr : p;
}

void release_shared_memory(const SharedMemory& m) {
  if (m.base) munmap(m.base, m.size);
  if (m.fd >= 0) close(m.fd);
}

}  // namespace rgpu::transport
