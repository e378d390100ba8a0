// TEST BACKEND part: external memory and semaphores for host-test. Memory
// is a file the worker can map (a memfd): importing maps it, a buffer is an
// address inside that mapping, a mipmapped array lies over it. A semaphore
// is a 64-bit counter at the start of such a file, so the application (or
// anything else holding the file) sees and moves it: a timeline semaphore's
// signal stores the value and a wait polls until the counter reaches it; a
// binary one's signal sets it to 1 and a wait takes it back to 0. Work runs
// when queued in host-test, so stream order is queue order; on a capturing
// stream signals and waits become graph nodes, which do the same when the
// graph reaches them.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "server/backend/external_api.hpp"
#include "server/backend/host/host_arrays.hpp"
#include "server/backend/host/host_graphs.hpp"

namespace rgpu::server {

class HostExternal final : public ExternalApi {
 public:
  HostExternal(HostArrays& arrays, HostGraphs& graphs) : arrays_(arrays), graphs_(graphs) {}

  int32_t import_memory(int fd, int32_t type, uint64_t size, uint32_t flags, uint64_t* memory) override;
  int32_t destroy_memory(uint64_t memory) override;
  int32_t map_buffer(uint64_t memory, uint64_t offset, uint64_t size, uint32_t flags, uint64_t* ptr) override;
  int32_t map_mipmapped_array(uint64_t memory, uint64_t offset, const ArraySpec& spec, unsigned levels,
                              uint64_t* mipmap) override;
  int32_t import_semaphore(int fd, int32_t type, uint32_t flags, uint64_t* semaphore) override;
  int32_t destroy_semaphore(uint64_t semaphore) override;
  int32_t signal(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) override;
  int32_t wait(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) override;

  // For the rest of host-test: free() of a mapped buffer, live memory checks,
  // and graph nodes signalling or waiting.
  bool release_buffer(uint64_t ptr);
  bool holds_buffer(uint64_t ptr, size_t n);
  int32_t run_signal(std::span<const proto::ExternalSemaphoreOp> ops);
  int32_t run_wait(std::span<const proto::ExternalSemaphoreOp> ops);

  // A mapped file; unmapped when the last user (memory, buffer, array) goes.
  struct Mapping {
    uint8_t* base;
    size_t size;
    ~Mapping();
  };

 private:
  int32_t queue(int32_t type, std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream);

  struct Semaphore {
    std::shared_ptr<Mapping> counter;
    bool timeline;
  };
  // Each operation's semaphore file and whether it is a timeline; empty when
  // one is not a semaphore of ours.
  std::vector<std::pair<std::shared_ptr<Mapping>, bool>> find_all(std::span<const proto::ExternalSemaphoreOp> ops);

  HostArrays& arrays_;
  HostGraphs& graphs_;
  std::mutex mutex_;
  std::map<uint64_t, std::shared_ptr<Mapping>> memories_;  // by handle
  std::map<uint64_t, std::pair<size_t, std::shared_ptr<Mapping>>> buffers_;  // by address: size, memory
  std::map<uint64_t, Semaphore> semaphores_;
  uint64_t next_handle_ = 1;
};

}  // namespace rgpu::server
