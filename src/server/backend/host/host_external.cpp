#include "server/backend/host/host_external.hpp"

#include <cuda.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "transport/shm/shared_memory.hpp"

namespace rgpu::server {
namespace {

// Maps `size` bytes of fd (a memfd sealed at a size at least that, which
// its sender cannot shrink under us) and closes fd, as a successful import
// takes it.
std::shared_ptr<HostExternal::Mapping> map_file(int fd, size_t size) {
  void* p = MAP_FAILED;
  if (size > 0 && transport::unsafe_to_map(fd, size).empty())
    p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<HostExternal::Mapping>(new HostExternal::Mapping{static_cast<uint8_t*>(p), size});
}

std::atomic_ref<uint64_t> counter(const HostExternal::Mapping& m) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(m.base));
}

}  // namespace

HostExternal::Mapping::~Mapping() { munmap(base, size); }

int32_t HostExternal::import_memory(int fd, int32_t, uint64_t size, uint32_t, uint64_t* memory) {
  auto m = map_file(fd, size);
  if (!m) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  *memory = next_handle_++;
  memories_[*memory] = std::move(m);
  return cudaSuccess;
}

// Buffers and arrays mapped from it keep the file mapped until they go.
int32_t HostExternal::destroy_memory(uint64_t memory) {
  std::lock_guard lock(mutex_);
  return memories_.erase(memory) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

int32_t HostExternal::map_buffer(uint64_t memory, uint64_t offset, uint64_t size, uint32_t, uint64_t* ptr) {
  std::lock_guard lock(mutex_);
  auto it = memories_.find(memory);
  if (it == memories_.end()) return cudaErrorInvalidResourceHandle;
  const auto& m = it->second;
  if (size == 0 || offset > m->size || size > m->size - offset) return cudaErrorInvalidValue;
  *ptr = reinterpret_cast<uint64_t>(m->base + offset);
  // A second buffer at the same address would free the first with it.
  if (buffers_.count(*ptr)) return cudaErrorInvalidValue;
  buffers_[*ptr] = {size, m};
  return cudaSuccess;
}

int32_t HostExternal::map_mipmapped_array(uint64_t memory, uint64_t offset, const ArraySpec& spec, unsigned levels,
                                          uint64_t* mipmap) {
  std::shared_ptr<Mapping> m;
  {
    std::lock_guard lock(mutex_);
    auto it = memories_.find(memory);
    if (it == memories_.end()) return cudaErrorInvalidResourceHandle;
    m = it->second;
  }
  if (offset > m->size) return cudaErrorInvalidValue;
  return arrays_.mipmapped_array_over(spec, levels, m->base + offset, m->size - offset, m, mipmap);
}

bool HostExternal::release_buffer(uint64_t ptr) {
  std::lock_guard lock(mutex_);
  return buffers_.erase(ptr) != 0;
}

bool HostExternal::holds_buffer(uint64_t ptr, size_t n) {
  std::lock_guard lock(mutex_);
  auto it = buffers_.upper_bound(ptr);
  if (it == buffers_.begin()) return false;
  --it;
  size_t size = it->second.first;
  return ptr - it->first <= size && n <= size - (ptr - it->first);
}

int32_t HostExternal::import_semaphore(int fd, int32_t type, uint32_t, uint64_t* semaphore) {
  auto m = map_file(fd, sizeof(uint64_t));
  if (!m) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  *semaphore = next_handle_++;
  semaphores_[*semaphore] = {std::move(m), type == CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD};
  return cudaSuccess;
}

int32_t HostExternal::destroy_semaphore(uint64_t semaphore) {
  std::lock_guard lock(mutex_);
  return semaphores_.erase(semaphore) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

// The semaphores' files stay mapped while an operation uses them.
std::vector<std::pair<std::shared_ptr<HostExternal::Mapping>, bool>> HostExternal::find_all(
    std::span<const proto::ExternalSemaphoreOp> ops) {
  std::vector<std::pair<std::shared_ptr<Mapping>, bool>> found;
  std::lock_guard lock(mutex_);
  for (const auto& op : ops) {
    auto it = semaphores_.find(op.semaphore);
    if (it == semaphores_.end()) return {};
    found.emplace_back(it->second.counter, it->second.timeline);
  }
  return found;
}

// On a capturing stream each becomes a graph node instead.
int32_t HostExternal::queue(int32_t type, std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) {
  if (graphs_.capturing(stream)) {
    GraphNodeParams p;
    p.type = type;
    p.semaphores.assign(ops.begin(), ops.end());
    return graphs_.record(stream, p);
  }
  return type == cudaGraphNodeTypeExtSemaphoreSignal ? run_signal(ops) : run_wait(ops);
}

int32_t HostExternal::signal(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) {
  return queue(cudaGraphNodeTypeExtSemaphoreSignal, ops, stream);
}

int32_t HostExternal::wait(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) {
  return queue(cudaGraphNodeTypeExtSemaphoreWait, ops, stream);
}

int32_t HostExternal::run_signal(std::span<const proto::ExternalSemaphoreOp> ops) {
  auto sems = find_all(ops);
  if (sems.size() != ops.size()) return cudaErrorInvalidResourceHandle;
  for (size_t i = 0; i < ops.size(); ++i) counter(*sems[i].first).store(sems[i].second ? ops[i].value : 1);
  return cudaSuccess;
}

// As a stream would, the queue stops here until every semaphore is ready.
int32_t HostExternal::run_wait(std::span<const proto::ExternalSemaphoreOp> ops) {
  auto sems = find_all(ops);
  if (sems.size() != ops.size()) return cudaErrorInvalidResourceHandle;
  for (size_t i = 0; i < ops.size(); ++i) {
    auto c = counter(*sems[i].first);
    for (;;) {
      uint64_t now = c.load();
      if (sems[i].second ? now >= ops[i].value : now != 0 && c.compare_exchange_weak(now, 0)) break;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  return cudaSuccess;
}

}  // namespace rgpu::server
