#include "client/cuda/kernel_launcher.hpp"

#include <cstring>
#include <vector>

#include "client/core/call.hpp"
#include "client/core/handles.hpp"
#include "client/core/kernel_launch.hpp"
#include "client/core/memory_map.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/cuda/module_loading.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

DriverFunction* driver_function(const void* handle) {
  return DriverHandles::get().find(reinterpret_cast<CUfunction>(const_cast<void*>(handle)));
}

cudaError_t remote_event(cudaEvent_t event, int device, cudaEvent_t* remote) {
  RemoteObject o;
  if (!events().find(event, &o) || o.device != device) return cudaErrorInvalidResourceHandle;
  *remote = reinterpret_cast<cudaEvent_t>(o.remote);
  return cudaSuccess;
}

}  // namespace

bool known_kernel(const void* handle) {
  return ModuleRegistry::get().find_kernel(handle) ||
         driver_function(handle);
}

cudaError_t resolve_kernel(const void* handle, int device, const LoadedKernel** out) {
  if (KernelEntry* k = ModuleRegistry::get().find_kernel(handle))
    return ModuleRegistry::get().kernel_on(k, device, out);
  DriverFunction* f = driver_function(handle);
  if (!f) return cudaErrorInvalidDeviceFunction;
  LoadedKernel* k;
  if (cudaError_t e = function_on(f, device, &k)) return e;
  *out = k;
  return cudaSuccess;
}

const char* kernel_name(const void* handle) {
  if (KernelEntry* k = ModuleRegistry::get().find_kernel(handle)) return k->name.c_str();
  DriverFunction* f = driver_function(handle);
  return f ? f->name.c_str() : nullptr;
}

int home_device(const void* handle) {
  if (DriverFunction* f = driver_function(handle))
    return f->module->device;
  return Runtime::current_device();
}

void note_max_dynamic_shared(const void* handle, int device, int32_t bytes) {
  if (KernelEntry* k = ModuleRegistry::get().find_kernel(handle)) {
    ModuleRegistry::get().set_max_dynamic_shared(k, device, bytes);
    return;
  }
  DriverFunction* f = driver_function(handle);
  LoadedKernel* loaded;
  // The attribute was just set there, so the kernel is loaded there.
  if (f && function_on(f, device, &loaded) == cudaSuccess) loaded->max_dynamic_shared = bytes;
}

cudaError_t put_launch_attributes(std::span<const cudaLaunchAttribute> attributes, int device, proto::Writer& w,
                                  bool* cooperative) {
  w.put<uint32_t>(attributes.size());
  for (cudaLaunchAttribute a : attributes) {
    switch (a.id) {
      case cudaLaunchAttributeProgrammaticEvent:
        if (cudaError_t e = remote_event(a.val.programmaticEvent.event, device, &a.val.programmaticEvent.event))
          return e;
        break;
      case cudaLaunchAttributeLaunchCompletionEvent:
        if (cudaError_t e =
                remote_event(a.val.launchCompletionEvent.event, device, &a.val.launchCompletionEvent.event))
          return e;
        break;
      case cudaLaunchAttributeDeviceUpdatableKernelNode:
        // It makes a device-updatable graph node; rgpu has no graphs.
        RGPU_LOG(warn, "launch attribute cudaLaunchAttributeDeviceUpdatableKernelNode is not supported by rgpu");
        return cudaErrorNotSupported;
      case cudaLaunchAttributeCooperative:
        *cooperative = *cooperative || a.val.cooperative;
        break;
      default:
        break;
    }
    w.put<int32_t>(a.id).put(a.val);
  }
  return cudaSuccess;
}

cudaError_t launch_kernel(const void* kernel, const KernelLaunch& l) {
  if (l.params && l.extra) return cudaErrorInvalidValue;
  const bool with_attributes = !l.attributes.empty();
  Call call(with_attributes ? proto::kOpLaunchKernelEx
                            : l.cooperative ? proto::kOpLaunchCooperativeKernel : proto::kOpLaunchKernel);
  uint64_t s;
  if (cudaError_t e = call.to_stream(l.stream, &s)) return e;
  const cudaDeviceProp* props;
  if (cudaError_t e = Runtime::get().properties(call.device_index(), &props)) return e;
  // Checked here, as the local runtime checks it, so that the error is the
  // launch's own and not a later call's.
  if (cudaError_t e = check_launch_config(*props, l.grid, l.block)) return e;
  const LoadedKernel* lk;
  if (cudaError_t e = resolve_kernel(kernel, call.device_index(), &lk)) return e;
  if (l.shared_mem > static_cast<size_t>(lk->max_dynamic_shared)) return cudaErrorInvalidValue;
  std::vector<uint8_t> packed;
  if (cudaError_t e = pack_launch_args(*lk, l.params, l.extra, &packed))
    return e;
  if (cudaError_t e = reach_host_pointer_args(MemoryMap::get(), &packed, call.device_index(),
                                              call.device()->session->shares_memory()))
    return e;
  call.args().put<uint64_t>(lk->function).put(l.grid).put(l.block).put<uint32_t>(l.shared_mem).put<uint64_t>(s);
  bool cooperative = l.cooperative;
  if (with_attributes)
    if (cudaError_t e = put_launch_attributes(l.attributes, call.device_index(), call.args(), &cooperative)) return e;
  call.args().put_bytes(packed.data(), packed.size());
  return cooperative ? call.run() : call.post();
}

cudaError_t cluster_occupancy(uint16_t op, const void* kernel, const KernelLaunch& l, int* out) {
  Call call(op);
  uint64_t s;
  if (cudaError_t e = call.to_stream(l.stream, &s)) return e;
  const LoadedKernel* lk;
  if (cudaError_t e = resolve_kernel(kernel, call.device_index(), &lk)) return e;
  call.args().put<uint64_t>(lk->function).put(l.grid).put(l.block).put<uint32_t>(l.shared_mem).put<uint64_t>(s);
  bool cooperative = false;
  if (cudaError_t e = put_launch_attributes(l.attributes, call.device_index(), call.args(), &cooperative)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  *out = call.reply().get<int32_t>();
  return cudaSuccess;
}

}  // namespace rgpu::client
