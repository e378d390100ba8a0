// Device management: the application's devices are the remote GPUs listed in
// RGPU_DEVICES, numbered from 0 in that order.
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/core/async_notifications.hpp"
#include "client/core/call.hpp"
#include "client/core/context_constants.hpp"
#include "client/core/function_attribute_cache.hpp"
#include "client/graph/staging_blocks.hpp"
#include "client/core/host_memory_model.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/module_registry.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/core/array_objects.hpp"
#include "client/cudart/event_reserve.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

extern "C" cudaError_t cudaGetDeviceCount(int* count) {
  return api([&]() -> cudaError_t {
    if (!count) return cudaErrorInvalidValue;
    *count = 0;
    Runtime& rt = Runtime::get();
    if (cudaError_t e = rt.ensure_init()) return e;
    *count = rt.device_count();
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  return api([&]() -> cudaError_t {
    if (!prop) return cudaErrorInvalidValue;
    Runtime& rt = Runtime::get();
    if (cudaError_t e = rt.ensure_init()) return e;
    const cudaDeviceProp* p;
    if (cudaError_t e = rt.properties(device, &p)) return e;
    *prop = *p;
    return cudaSuccess;
  });
}

// Facts about the application's host memory are rgpu's (host_memory_model.hpp).
extern "C" cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  return api([&]() -> cudaError_t {
    if (!value) return cudaErrorInvalidValue;
    Call call(proto::kOpDeviceGetAttribute);
    int32_t remote;
    if (cudaError_t e = call.to_device(device, &remote)) return e;
    if (auto v = host_memory_attribute(attr, call.device()->session->shares_memory())) {
      *value = *v;
      return cudaSuccess;
    }
    // The administrator may change the compute mode while the process runs.
    std::atomic<uint64_t>* kept =
        attr > 0 && attr < cudaDevAttrMax && attr != cudaDevAttrComputeMode ? &call.device()->attributes[attr] : nullptr;
    if (uint64_t k = kept ? kept->load(std::memory_order_relaxed) : 0) {
      *value = static_cast<int32_t>(static_cast<uint32_t>(k));
      return cudaSuccess;
    }
    call.quiet().args().put(attr).put<int32_t>(remote);
    if (cudaError_t e = call.run()) return e;
    *value = descriptor_handle_attribute(attr, call.reply().get<int32_t>(), call.device()->session->shares_memory());
    if (kept) kept->store(VirtualDevice::kKnownAttribute | static_cast<uint32_t>(*value), std::memory_order_relaxed);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaSetDevice(int device) {
  return api([&]() -> cudaError_t {
    Runtime& rt = Runtime::get();
    if (cudaError_t e = rt.ensure_init()) return e;
    if (!rt.device(device)) return cudaErrorInvalidDevice;
    Runtime::set_current_device(device);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGetDevice(int* device) {
  return api([&]() -> cudaError_t {
    if (!device) return cudaErrorInvalidValue;
    if (cudaError_t e = Runtime::get().ensure_init()) return e;
    *device = Runtime::current_device();
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaDeviceSynchronize() {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpDeviceSynchronize);
    if (cudaError_t e = call.to_current_device()) return e;
    return call.run();
  });
}

extern "C" cudaError_t cudaDeviceReset() {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpDeviceReset);
    if (cudaError_t e = call.to_current_device()) return e;
    cudaError_t e = call.run();
    // Even a failed reset may have reset the device's kernels and context.
    FunctionAttributeCache::get().forget_device(call.device_index());
    ContextConstants::get().forget_device(call.device_index());
    EventReserve::get().forget_device(call.device_index());
    if (e == cudaSuccess) {
      // The server dropped everything the device held; so do we.
      ModuleRegistry::get().forget_device(call.device_index());
      DriverHandles::get().forget_device(call.device_index());
      MemoryMap::get().forget_device(call.device_index());
      forget_array_objects(call.device_index());
      graph_staging(call.device_index()).forget();
    }
    return e;
  });
}

extern "C" cudaError_t cudaRuntimeGetVersion(int* version) {
  return api([&]() -> cudaError_t {
    if (!version) return cudaErrorInvalidValue;
    *version = CUDART_VERSION;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaDriverGetVersion(int* version) {
  return api([&]() -> cudaError_t {
    if (!version) return cudaErrorInvalidValue;
    // The driver is the server's: its version came with the handshake. With
    // no server there is no driver, which CUDA reports as version 0.
    *version = 0;
    Runtime& rt = Runtime::get();
    if (rt.ensure_init() != cudaSuccess) return cudaSuccess;
    VirtualDevice* d = rt.device(Runtime::current_device());
    if (!d) return cudaErrorInvalidDevice;
    *version = d->session->hello().driver_version;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaDeviceRegisterAsyncNotification(int device, cudaAsyncCallback callbackFunc, void* userData,
                                                           cudaAsyncCallbackHandle_t* callback) {
  return api([&] { return register_async_notification(device, callbackFunc, userData, callback); });
}

extern "C" cudaError_t cudaDeviceUnregisterAsyncNotification(int device, cudaAsyncCallbackHandle_t callback) {
  return api([&] { return unregister_async_notification(device, callback); });
}
