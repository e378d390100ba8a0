// External memory and semaphores of the driver API, on the runtime's paths:
// the driver's descriptors and parameters are the runtime's, field for field
// (checked below), a CUexternalMemory is the runtime's cudaExternalMemory_t
// and a CUexternalSemaphore its cudaExternalSemaphore_t.
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include "client/cuda/array_formats.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

static_assert(sizeof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC) == sizeof(cudaExternalMemoryHandleDesc));
static_assert(offsetof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, size) == offsetof(cudaExternalMemoryHandleDesc, size));
static_assert(offsetof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, flags) == offsetof(cudaExternalMemoryHandleDesc, flags));
static_assert(sizeof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC) == sizeof(cudaExternalMemoryBufferDesc));
static_assert(offsetof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, flags) == offsetof(cudaExternalMemoryBufferDesc, flags));
static_assert(sizeof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC) == sizeof(cudaExternalSemaphoreHandleDesc));
static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, flags) ==
              offsetof(cudaExternalSemaphoreHandleDesc, flags));
static_assert(sizeof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS) == sizeof(cudaExternalSemaphoreSignalParams));
static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, flags) ==
              offsetof(cudaExternalSemaphoreSignalParams, flags));
static_assert(sizeof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS) == sizeof(cudaExternalSemaphoreWaitParams));
static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.keyedMutex.timeoutMs) ==
              offsetof(cudaExternalSemaphoreWaitParams, params.keyedMutex.timeoutMs));
static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, flags) ==
              offsetof(cudaExternalSemaphoreWaitParams, flags));

template <typename To, typename From>
To rt(From p) {
  return reinterpret_cast<To>(p);
}

}  // namespace

extern "C" CUresult CUDAAPI cuImportExternalMemory(CUexternalMemory* memory,
                                                   const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* desc) {
  return through_runtime([&] {
    return cudaImportExternalMemory(rt<cudaExternalMemory_t*>(memory), rt<const cudaExternalMemoryHandleDesc*>(desc));
  });
}

extern "C" CUresult CUDAAPI cuExternalMemoryGetMappedBuffer(CUdeviceptr* ptr, CUexternalMemory memory,
                                                            const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* desc) {
  return through_runtime([&] {
    return cudaExternalMemoryGetMappedBuffer(rt<void**>(ptr), rt<cudaExternalMemory_t>(memory),
                                             rt<const cudaExternalMemoryBufferDesc*>(desc));
  });
}

extern "C" CUresult CUDAAPI cuExternalMemoryGetMappedMipmappedArray(
    CUmipmappedArray* mipmap, CUexternalMemory memory, const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC* desc) {
  if (!mipmap || !desc) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_ARRAY3D_DESCRIPTOR& a = desc->arrayDesc;
  cudaExternalMemoryMipmappedArrayDesc d{};
  if (!to_channel_desc(a.Format, a.NumChannels, &d.formatDesc)) return CUDA_ERROR_INVALID_VALUE;
  d.offset = desc->offset;
  d.extent = {a.Width, a.Height, a.Depth};
  d.flags = a.Flags;  // CUDA_ARRAY3D_* flags are the runtime's cudaArray* flags, bit for bit
  d.numLevels = desc->numLevels;
  return through_runtime([&] {
    return cudaExternalMemoryGetMappedMipmappedArray(rt<cudaMipmappedArray_t*>(mipmap),
                                                     rt<cudaExternalMemory_t>(memory), &d);
  });
}

extern "C" CUresult CUDAAPI cuDestroyExternalMemory(CUexternalMemory memory) {
  return through_runtime([&] { return cudaDestroyExternalMemory(rt<cudaExternalMemory_t>(memory)); });
}

extern "C" CUresult CUDAAPI cuImportExternalSemaphore(CUexternalSemaphore* semaphore,
                                                      const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC* desc) {
  return through_runtime([&] {
    return cudaImportExternalSemaphore(rt<cudaExternalSemaphore_t*>(semaphore),
                                       rt<const cudaExternalSemaphoreHandleDesc*>(desc));
  });
}

extern "C" CUresult CUDAAPI cuSignalExternalSemaphoresAsync(const CUexternalSemaphore* sems,
                                                            const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* params,
                                                            unsigned int n, CUstream stream) {
  return through_runtime([&] {
    return cudaSignalExternalSemaphoresAsync(rt<const cudaExternalSemaphore_t*>(sems),
                                             rt<const cudaExternalSemaphoreSignalParams*>(params), n,
                                             rt<cudaStream_t>(stream));
  });
}

extern "C" CUresult CUDAAPI cuWaitExternalSemaphoresAsync(const CUexternalSemaphore* sems,
                                                          const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* params,
                                                          unsigned int n, CUstream stream) {
  return through_runtime([&] {
    return cudaWaitExternalSemaphoresAsync(rt<const cudaExternalSemaphore_t*>(sems),
                                           rt<const cudaExternalSemaphoreWaitParams*>(params), n,
                                           rt<cudaStream_t>(stream));
  });
}

extern "C" CUresult CUDAAPI cuDestroyExternalSemaphore(CUexternalSemaphore semaphore) {
  return through_runtime([&] { return cudaDestroyExternalSemaphore(rt<cudaExternalSemaphore_t>(semaphore)); });
}
