// Which address ranges the application holds: device allocations (and on
// which virtual device) and page-locked host memory. Used to resolve
// cudaMemcpyDefault, answer cudaPointerGetAttributes and reject bad pointers
// before a round trip. Page-locked ranges are handed to the transports that
// register memory as they come and go (transport_choice.hpp).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace rgpu::client {

struct DeviceRange {
  uint64_t base;
  size_t size;
  int device;
  // Made by a graph's allocation node (cudaGraphAddMemAllocNode): its address
  // is fixed when the node is made, its memory lives from the graph's launch
  // until freed, in GPU order the client does not see.
  bool graph_memory = false;
  uint64_t graph = 0;           // that graph (an opaque tag) until it is destroyed
  bool freed_in_graph = false;  // the same graph frees it: only that graph may use and free it
  // The address the application holds of a module variable that a session
  // move loaded elsewhere (given_variables.hpp): where the variable lies now.
  uint64_t moved_to = 0;
};

struct HostRange {
  uint64_t base;
  size_t size;
  unsigned flags;
  bool registered;  // cudaHostRegister (true) or allocated by us (false)
  int shared_fd;    // memfd shared with shm servers, or -1
  // Mapped memory where the GPU cannot reach this process: device memory at
  // this same address, kept coherent in software (coherent_memory.hpp).
  bool coherent = false;
  // Page-locked memory made coherent after it was allocated (a kernel was
  // handed it): its device memory lies here instead of at base.
  uint64_t device_address = 0;
};

class MemoryMap {
 public:
  static MemoryMap& get();

  // False when the range overlaps memory already known, which happens only
  // when two servers hand out the same addresses: the pointer could not say
  // which GPU it belongs to, so the caller must refuse the allocation.
  // A same-device graph allocation the new range overlaps is gone (its
  // device hands out its address again): it is forgotten.
  bool add_device(uint64_t base, size_t size, int device);
  // A graph allocation node's range, tagged with its graph.
  bool add_graph_memory(uint64_t base, size_t size, int device, uint64_t graph);
  // The application's address of a moved module variable stands for
  // `now_at`, where the variable lies on its device's server now; false
  // when the address is other memory's.
  bool add_moved_variable(uint64_t base, size_t size, int device, uint64_t now_at);
  // Rewrites the 8-byte-aligned words of kernel arguments that hold an
  // address of a moved variable to where it lies now.
  void follow_moved_variables(std::span<uint8_t> args) const;
  // A free node of `graph` frees the allocation at base.
  void graph_frees(uint64_t base, uint64_t graph);
  // `graph` is destroyed: what it allocated and frees itself is gone; what it
  // leaves allocated stays until the application frees it (CUDA's rule).
  void graph_destroyed(uint64_t graph);
  // `exec` was made from `graph`: what the graph leaves allocated, each
  // launch of exec allocates again, at its address, if the application freed it.
  void graph_instantiated(uint64_t graph, uint64_t exec);
  // `exec` is launched: its memory the application freed is known again.
  void graph_launched(uint64_t exec);
  void exec_destroyed(uint64_t exec);
  // The allocation starting at base that the application may free (cudaFree,
  // cudaFreeAsync): not one its own graph frees.
  std::optional<DeviceRange> freeable(uint64_t base) const;
  std::optional<DeviceRange> remove_device(uint64_t base);
  // The allocation containing [ptr, ptr + n), if any.
  std::optional<DeviceRange> find_device(uint64_t ptr, size_t n = 1) const;
  void forget_device(int device);
  // The device's allocations, in address order.
  std::vector<DeviceRange> device_ranges(int device) const;

  void add_host(const HostRange& r);
  // Whether some page-locked memory is out of reach of a GPU whose session
  // shares memory (shm) or not: memory neither shared nor coherent, or
  // shared memory for a GPU that does not share. Lock-free: every kernel
  // launch asks it before looking at its arguments.
  bool may_hold_unreachable_host(bool shares_memory) const {
    return unshared_host_.load(std::memory_order_acquire) > 0 ||
           (!shares_memory && shared_host_.load(std::memory_order_acquire) > 0);
  }
  // Whether a kernel argument may name page-locked memory by an address
  // that is not the GPU's: out of its reach, or made coherent elsewhere.
  bool may_hold_host_args(bool shares_memory) const {
    return may_hold_unreachable_host(shares_memory) || relocated_host_.load(std::memory_order_acquire) > 0;
  }
  // The page-locked ranges that 8-byte-aligned words of `bytes` point into,
  // with each word's offset; one lock for all.
  std::vector<std::pair<size_t, HostRange>> host_ranges_named(std::span<const uint8_t> bytes) const;
  // The coherent range whose device memory holds `device_ptr` (relocated).
  std::optional<HostRange> find_relocated(uint64_t device_ptr) const;
  // Where the GPU has `ptr` when it lies in relocated page-locked memory or
  // in a moved module variable, or nothing; one check while there is none.
  std::optional<uint64_t> device_side(uint64_t ptr) const;
  // The page-locked range shared with shm servers that holds [ptr, ptr + n).
  std::optional<HostRange> find_shared(uint64_t ptr, size_t n) const;
  std::optional<HostRange> remove_host(uint64_t base);
  std::optional<HostRange> find_host(uint64_t ptr) const;
  // Page-locked ranges, coherent ones left out.
  std::vector<HostRange> page_locked_ranges() const;

 private:
  template <typename R>
  std::optional<R> remove(std::map<uint64_t, R>& m, uint64_t base);
  bool insert_device(const DeviceRange& r);
  bool overlaps_known(const DeviceRange& r) const;  // mutex_ held

  mutable std::mutex mutex_;
  std::map<uint64_t, DeviceRange> device_;
  std::map<uint64_t, HostRange> host_;
  std::atomic<int> unshared_host_{0}, shared_host_{0};  // host_'s ranges of each kind
  std::atomic<int> relocated_host_{0};                  // and its ranges with a device_address
  std::atomic<bool> moved_variables_{false};            // device_ has held a moved variable
  std::map<uint64_t, std::vector<DeviceRange>> exec_memory_;  // by executable graph
};

}  // namespace rgpu::client
