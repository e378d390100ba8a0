#include "server/backend/cuda/cuda_external.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include "server/backend/cuda/cuda_semaphore_params.hpp"

namespace rgpu::server {
namespace {

cudaExternalMemory_t memory_of(uint64_t h) { return reinterpret_cast<cudaExternalMemory_t>(h); }
cudaExternalSemaphore_t semaphore_of(uint64_t h) { return reinterpret_cast<cudaExternalSemaphore_t>(h); }

// The driver takes the descriptor on success only (CUDA's rule for imported
// descriptors): on failure it is still ours to close.
int32_t closing_on_failure(int fd, cudaError_t e) {
  if (e != cudaSuccess) close(fd);
  return e;
}

}  // namespace

int32_t CudaExternal::import_memory(int fd, int32_t type, uint64_t size, uint32_t flags, uint64_t* memory) {
  cudaExternalMemoryHandleDesc d{};
  d.type = static_cast<cudaExternalMemoryHandleType>(type);
  d.handle.fd = fd;
  d.size = size;
  d.flags = flags;
  cudaExternalMemory_t m = nullptr;
  cudaError_t e = cudaImportExternalMemory(&m, &d);
  *memory = reinterpret_cast<uint64_t>(m);
  return closing_on_failure(fd, e);
}

int32_t CudaExternal::destroy_memory(uint64_t memory) { return cudaDestroyExternalMemory(memory_of(memory)); }

int32_t CudaExternal::map_buffer(uint64_t memory, uint64_t offset, uint64_t size, uint32_t flags, uint64_t* ptr) {
  cudaExternalMemoryBufferDesc d{};
  d.offset = offset;
  d.size = size;
  d.flags = flags;
  void* p = nullptr;
  cudaError_t e = cudaExternalMemoryGetMappedBuffer(&p, memory_of(memory), &d);
  *ptr = reinterpret_cast<uint64_t>(p);
  return e;
}

int32_t CudaExternal::map_mipmapped_array(uint64_t memory, uint64_t offset, const ArraySpec& spec, unsigned levels,
                                          uint64_t* mipmap) {
  cudaExternalMemoryMipmappedArrayDesc d{};
  d.offset = offset;
  d.formatDesc = spec.format;
  d.extent = spec.extent;
  d.flags = spec.flags;
  d.numLevels = levels;
  cudaMipmappedArray_t m = nullptr;
  cudaError_t e = cudaExternalMemoryGetMappedMipmappedArray(&m, memory_of(memory), &d);
  *mipmap = reinterpret_cast<uint64_t>(m);
  return e;
}

int32_t CudaExternal::import_semaphore(int fd, int32_t type, uint32_t flags, uint64_t* semaphore) {
  cudaExternalSemaphoreHandleDesc d{};
  d.type = static_cast<cudaExternalSemaphoreHandleType>(type);
  d.handle.fd = fd;
  d.flags = flags;
  cudaExternalSemaphore_t s = nullptr;
  cudaError_t e = cudaImportExternalSemaphore(&s, &d);
  *semaphore = reinterpret_cast<uint64_t>(s);
  return closing_on_failure(fd, e);
}

int32_t CudaExternal::destroy_semaphore(uint64_t semaphore) {
  return cudaDestroyExternalSemaphore(semaphore_of(semaphore));
}

int32_t CudaExternal::signal(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) {
  SignalArrays a(ops);
  return cudaSignalExternalSemaphoresAsync(a.sems.data(), a.params.data(), a.count(),
                                           reinterpret_cast<cudaStream_t>(stream));
}

int32_t CudaExternal::wait(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) {
  WaitArrays a(ops);
  return cudaWaitExternalSemaphoresAsync(a.sems.data(), a.params.data(), a.count(),
                                         reinterpret_cast<cudaStream_t>(stream));
}

}  // namespace rgpu::server
