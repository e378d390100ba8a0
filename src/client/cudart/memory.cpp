// Device memory lives on the server; the application gets the real device
// addresses. Page-locked host memory is ordinary client memory that rgpu
// remembers, so it is reported and freed the way CUDA would.
#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <cstdlib>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/cudart/coherent_memory.hpp"
#include "client/cudart/device_allocation.hpp"
#include "client/cudart/managed_memory.hpp"
#include "client/cudart/mapped_memory.hpp"
#include "client/cudart/shared_host_memory.hpp"
#include "common/log.hpp"
#include "transport/shm/shared_memory.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

extern "C" cudaError_t cudaMalloc(void** devPtr, size_t size) {
  return api([&]() -> cudaError_t {
    if (!devPtr) return cudaErrorInvalidValue;
    Call call(proto::kOpMalloc);
    if (cudaError_t e = call.to_current_device()) return e;
    if (size == 0) {
      *devPtr = nullptr;
      return cudaSuccess;
    }
    call.args().put<uint64_t>(size);
    if (cudaError_t e = call.run()) return e;
    uint64_t ptr = call.reply().get<uint64_t>();
    if (cudaError_t e = remember_allocation(call, ptr, size)) return e;
    *devPtr = reinterpret_cast<void*>(ptr);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  return api([&]() -> cudaError_t {
    if (!devPtr || !pitch) return cudaErrorInvalidValue;
    Call call(proto::kOpMallocPitch);
    if (cudaError_t e = call.to_current_device()) return e;
    call.args().put<uint64_t>(width).put<uint64_t>(height);
    if (cudaError_t e = call.run()) return e;
    uint64_t ptr = call.reply().get<uint64_t>();
    uint64_t p = call.reply().get<uint64_t>();
    if (ptr)
      if (cudaError_t e = remember_allocation(call, ptr, p * height)) return e;
    *devPtr = reinterpret_cast<void*>(ptr);
    *pitch = p;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaFree(void* devPtr) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpFree);
    if (cudaError_t e = call.to_current_device()) return e;
    if (!devPtr) return cudaSuccess;
    if (find_managed(reinterpret_cast<uint64_t>(devPtr))) return free_managed(reinterpret_cast<uint64_t>(devPtr));
    // Mapped memory's device memory goes with cudaFreeHost only.
    if (auto host = MemoryMap::get().find_host(reinterpret_cast<uint64_t>(devPtr)); host && host->coherent)
      return cudaErrorInvalidValue;
    if (MemoryMap::get().find_relocated(reinterpret_cast<uint64_t>(devPtr))) return cudaErrorInvalidValue;
    auto range = MemoryMap::get().freeable(reinterpret_cast<uint64_t>(devPtr));
    if (!range) return cudaErrorInvalidValue;
    Call on_owner(proto::kOpFree);
    int32_t remote;
    if (cudaError_t e = on_owner.to_device(range->device, &remote)) return e;
    on_owner.args().put<uint64_t>(range->base);
    cudaError_t e = on_owner.run();
    if (e == cudaSuccess) MemoryMap::get().remove_device(range->base);
    return e;
  });
}

extern "C" cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  return api([&]() -> cudaError_t {
    if (!free || !total) return cudaErrorInvalidValue;
    Call call(proto::kOpMemGetInfo);
    if (cudaError_t e = call.to_current_device()) return e;
    if (cudaError_t e = call.run()) return e;
    *free = call.reply().get<uint64_t>();
    *total = call.reply().get<uint64_t>();
    return cudaSuccess;
  });
}

namespace {

cudaError_t host_alloc(void** ptr, size_t size, unsigned flags) {
  if (!ptr) return cudaErrorInvalidValue;
  // Like CUDA, the first host allocation needs a working runtime.
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  if (!Runtime::get().sharing_sessions().empty()) {
    try {
      auto m = transport::create_shared_memory(size);
      if (share_with_servers(reinterpret_cast<uint64_t>(m.base), m.size, m.fd)) {
        MemoryMap::get().add_host({reinterpret_cast<uint64_t>(m.base), size, flags, false, m.fd});
        *ptr = m.base;
        return cudaSuccess;
      }
      transport::release_shared_memory(m);
    } catch (const transport::TransportError& e) {
      RGPU_LOG(warn, "page-locked memory not shared with the server: %s", e.what());
    }
  }
  if (coherent_page_locked(flags)) return alloc_coherent(ptr, size, flags);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return cudaErrorMemoryAllocation;
  MemoryMap::get().add_host({reinterpret_cast<uint64_t>(p), size, flags, false, -1});
  *ptr = p;
  return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return api([&] { return host_alloc(ptr, size, cudaHostAllocDefault); });
}

extern "C" cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return api([&]() -> cudaError_t {
    constexpr unsigned kKnown = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (flags & ~kKnown) return cudaErrorInvalidValue;
    return host_alloc(pHost, size, flags);
  });
}

extern "C" cudaError_t cudaFreeHost(void* ptr) {
  return api([&]() -> cudaError_t {
    if (!ptr) return cudaSuccess;
    auto range = MemoryMap::get().find_host(reinterpret_cast<uint64_t>(ptr));
    if (!range || range->registered || range->base != reinterpret_cast<uint64_t>(ptr))
      return cudaErrorInvalidValue;
    Runtime::get().finish_background_copies();
    MemoryMap::get().remove_host(range->base);
    if (range->coherent) return coherent_memory::release(range->base);
    forget_mapped(range->base);
    if (range->shared_fd >= 0) {
      unshare_with_servers(range->base, Runtime::get().sharing_sessions().size());
      transport::release_shared_memory({ptr, range->size, range->shared_fd});
    } else {
      munmap(ptr, range->size);
    }
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!ptr || size == 0) return cudaErrorInvalidValue;
    if (cudaError_t e = Runtime::get().ensure_init()) return e;
    if (MemoryMap::get().find_host(reinterpret_cast<uint64_t>(ptr)))
      return cudaErrorHostMemoryAlreadyRegistered;
    // Over shm its pages become memory the servers map, as the driver pins
    // them locally. Elsewhere (or where they cannot be shared) it has no
    // device address: cudaHostGetDevicePointer says so, while programs that
    // only copy through it keep working.
    int fd = -1;
    if (!Runtime::get().sharing_sessions().empty() && !(flags & cudaHostRegisterIoMemory))
      if (auto pages = share_registered(ptr, size)) fd = pages->fd;
    MemoryMap::get().add_host({reinterpret_cast<uint64_t>(ptr), size, flags, true, fd});
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaHostUnregister(void* ptr) {
  return api([&]() -> cudaError_t {
    auto range = MemoryMap::get().find_host(reinterpret_cast<uint64_t>(ptr));
    if (!range || !range->registered || range->base != reinterpret_cast<uint64_t>(ptr))
      return cudaErrorHostMemoryNotRegistered;
    Runtime::get().finish_background_copies();
    MemoryMap::get().remove_host(range->base);
    forget_mapped(range->base);
    if (range->shared_fd >= 0) unshare_registered(registered_pages(range->base, range->size, range->shared_fd));
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  return api([&]() -> cudaError_t {
    if (!attributes) return cudaErrorInvalidValue;
    if (cudaError_t e = Runtime::get().ensure_init()) return e;
    auto addr = reinterpret_cast<uint64_t>(ptr);
    *attributes = cudaPointerAttributes{};
    if (auto m = find_managed(addr)) {
      attributes->type = cudaMemoryTypeManaged;
      attributes->device = m->device;
      attributes->devicePointer = attributes->hostPointer = const_cast<void*>(ptr);
    } else if (auto d = MemoryMap::get().find_device(addr)) {
      // The device address of mapped host memory is host memory.
      auto host = mapped_host_address(addr);
      attributes->type = host ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
      attributes->device = d->device;
      attributes->devicePointer = const_cast<void*>(ptr);
      if (host) attributes->hostPointer = reinterpret_cast<void*>(*host);
    } else if (auto h = MemoryMap::get().find_host(addr)) {
      // The GPU reaches client memory only where it was mapped (shm).
      attributes->type = cudaMemoryTypeHost;
      attributes->device = Runtime::current_device();
      attributes->hostPointer = const_cast<void*>(ptr);
      if (auto device = page_locked_device_address(*h, addr)) attributes->devicePointer = reinterpret_cast<void*>(*device);
    } else {
      attributes->type = cudaMemoryTypeUnregistered;
      attributes->device = cudaInvalidDeviceId;
      attributes->hostPointer = const_cast<void*>(ptr);
    }
    return cudaSuccess;
  });
}
