// Which address ranges the application holds: device allocations (and on
// which virtual device) and page-locked host memory. Used to resolve
// cudaMemcpyDefault, answer cudaPointerGetAttributes and reject bad pointers
// before a round trip.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace rgpu::client {

struct DeviceRange {
  uint64_t base;
  size_t size;
  int device;
};

struct HostRange {
  uint64_t base;
  size_t size;
  unsigned flags;
  bool registered;  // cudaHostRegister (true) or allocated by us (false)
  int shared_fd;    // memfd shared with shm servers, or -1
};

class MemoryMap {
 public:
  static MemoryMap& get();

  // False when the range overlaps memory already known, which happens only
  // when two servers hand out the same addresses: the pointer could not say
  // which GPU it belongs to, so the caller must refuse the allocation.
  bool add_device(uint64_t base, size_t size, int device);
  std::optional<DeviceRange> remove_device(uint64_t base);
  // The allocation containing [ptr, ptr + n), if any.
  std::optional<DeviceRange> find_device(uint64_t ptr, size_t n = 1) const;
  void forget_device(int device);

  void add_host(uint64_t base, size_t size, unsigned flags, bool registered, int shared_fd = -1);
  // The page-locked range shared with shm servers that holds [ptr, ptr + n).
  std::optional<HostRange> find_shared(uint64_t ptr, size_t n) const;
  std::optional<HostRange> remove_host(uint64_t base);
  std::optional<HostRange> find_host(uint64_t ptr) const;

 private:
  template <typename R>
  std::optional<R> remove(std::map<uint64_t, R>& m, uint64_t base);

  mutable std::mutex mutex_;
  std::map<uint64_t, DeviceRange> device_;
  std::map<uint64_t, HostRange> host_;
};

}  // namespace rgpu::client
