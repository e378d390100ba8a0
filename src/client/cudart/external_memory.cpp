// External memory (cudaImportExternalMemory & co.). Only file-descriptor
// handles can reach the server, and only over shm, where the descriptor
// travels with the call (see import_with_fd); Win32, Direct3D and NvSciBuf
// handles do not exist on Linux, where the GPU's driver refuses them too.
// A mapped buffer is device memory of the importing device (cudaFree
// releases it, as in CUDA); a mapped mipmapped array is one like
// cudaMallocMipmappedArray's (cudaFreeMipmappedArray releases it).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/external_handles.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/array_objects.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// The driver's numbering, which the runtime's shares (the driver API comes
// through here with its dma-buf descriptors too).
bool is_fd_type(int type) {
  return type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD || type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
}

bool is_known_type(int type) {
  return type >= CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD && type <= CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
}

// The object behind a handle, with a call routed to its device.
cudaError_t route(Call& call, cudaExternalMemory_t memory, RemoteObject* o) {
  if (!external_memories().find(memory, o)) return cudaErrorInvalidResourceHandle;
  int32_t remote;
  return call.to_device(o->device, &remote);
}

}  // namespace

extern "C" cudaError_t cudaImportExternalMemory(cudaExternalMemory_t* memory, const cudaExternalMemoryHandleDesc* desc) {
  return api([&]() -> cudaError_t {
    if (!memory || !desc || !is_known_type(desc->type)) return cudaErrorInvalidValue;
    if (!is_fd_type(desc->type)) {
      RGPU_LOG(warn, "cudaImportExternalMemory: handle type %d is a Windows, Direct3D or NvSciBuf handle, which "
                     "Linux drivers do not import", static_cast<int>(desc->type));
      return cudaErrorNotSupported;
    }
    if (desc->size == 0 || (desc->flags & ~cudaExternalMemoryDedicated)) return cudaErrorInvalidValue;
    Call call(proto::kOpExternalMemoryImport);
    if (cudaError_t e = call.to_current_device()) return e;
    call.args().put<int32_t>(desc->type).put<uint64_t>(desc->size).put<uint32_t>(desc->flags);
    if (cudaError_t e = import_with_fd(call, desc->handle.fd, "cudaImportExternalMemory")) return e;
    *memory = external_memories().add(call.device_index(), call.reply().get<uint64_t>());
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaExternalMemoryGetMappedBuffer(void** ptr, cudaExternalMemory_t memory,
                                                         const cudaExternalMemoryBufferDesc* desc) {
  return api([&]() -> cudaError_t {
    if (!ptr || !desc) return cudaErrorInvalidValue;
    Call call(proto::kOpExternalMemoryMapBuffer);
    RemoteObject o;
    if (cudaError_t e = route(call, memory, &o)) return e;
    call.args().put<uint64_t>(o.remote).put<uint64_t>(desc->offset).put<uint64_t>(desc->size).put<uint32_t>(
        desc->flags);
    if (cudaError_t e = call.run()) return e;
    uint64_t base = call.reply().get<uint64_t>();
    if (!MemoryMap::get().add_device(base, desc->size, o.device)) {
      // Overlaps memory the client knows already: give the buffer back.
      Call undo(proto::kOpFree);
      int32_t remote;
      if (undo.to_device(o.device, &remote) == cudaSuccess) {
        undo.args().put<uint64_t>(base);
        undo.run();
      }
      return cudaErrorInvalidValue;
    }
    *ptr = reinterpret_cast<void*>(base);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaExternalMemoryGetMappedMipmappedArray(cudaMipmappedArray_t* mipmap,
                                                                 cudaExternalMemory_t memory,
                                                                 const cudaExternalMemoryMipmappedArrayDesc* desc) {
  return api([&]() -> cudaError_t {
    if (!mipmap || !desc) return cudaErrorInvalidValue;
    Call call(proto::kOpExternalMemoryMapMipmap);
    RemoteObject o;
    if (cudaError_t e = route(call, memory, &o)) return e;
    call.args().put<uint64_t>(o.remote).put<uint64_t>(desc->offset);
    call.args().put(desc->formatDesc).put(desc->extent).put<uint32_t>(desc->flags).put<uint32_t>(desc->numLevels);
    if (cudaError_t e = call.run()) return e;
    uint64_t remote = call.reply().get<uint64_t>();
    unsigned levels = call.reply().get<uint32_t>();
    *mipmap = mipmapped_arrays().add({o.device, remote, desc->formatDesc, desc->extent, desc->flags, levels});
    return cudaSuccess;
  });
}

// Buffers and arrays mapped from it stay until freed, as CUDA requires.
extern "C" cudaError_t cudaDestroyExternalMemory(cudaExternalMemory_t memory) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpExternalMemoryDestroy);
    RemoteObject o;
    if (cudaError_t e = route(call, memory, &o)) return e;
    call.args().put<uint64_t>(o.remote);
    if (cudaError_t e = call.run()) return e;
    external_memories().remove(memory);
    return cudaSuccess;
  });
}
