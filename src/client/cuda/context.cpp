// Contexts, emulated: every context of a device is that device's primary
// context, and the current context is the runtime's current device, so that
// driver and runtime calls of one program see the same device. cuCtxCreate
// retains the primary context and cuCtxDestroy releases it; device memory is
// freed by the calls that free it, a reset, or the end of the session.
// The exception is a green context's CUcontext (cuCtxFromGreenCtx): current,
// it makes the thread's calls on its device run in the green context on the
// server (Runtime::set_current_context).
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include <array>
#include <mutex>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/runtime.hpp"
#include "client/core/thread_resident.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/export_tables/export_tables.hpp"
#include "client/cuda/green_context_handles.hpp"
#include "client/cuda/primary_context.hpp"

using namespace rgpu::client;

namespace {

constexpr int kMaxDevices = 64;

struct PrimaryContext {
  int device = 0;
  int retained = 0;
  unsigned flags = 0;
};

std::mutex g_mutex;
std::array<PrimaryContext, kMaxDevices> g_primary = [] {
  std::array<PrimaryContext, kMaxDevices> a{};
  for (int i = 0; i < kMaxDevices; ++i) a[i].device = i;
  return a;
}();
// A thread's current context: a device and a green context's slot there
// (0: the device's primary context).
struct CurrentContext {
  int device;
  uint16_t green_slot;
};
CurrentContext current() { return {Runtime::current_device(), Runtime::current_green_slot()}; }
void make_current(CurrentContext c) { Runtime::set_current_context(c.device, c.green_slot); }

// The contexts pushed below the current one.
ThreadResident<std::vector<CurrentContext>> t_pushed;

// The device of a primary context handle, or -1.
int primary_device(CUcontext ctx) {
  for (int i = 0; i < Runtime::get().device_count() && i < kMaxDevices; ++i)
    if (ctx == primary_context(i)) return i;
  return -1;
}

// What a context handle rgpu gave out stands for; false if it is none.
bool context_of(CUcontext ctx, CurrentContext* out) {
  if (int dev = primary_device(ctx); dev >= 0) {
    *out = {dev, 0};
    return true;
  }
  GreenContext g;
  if (!find_green_context(ctx, &g)) return false;
  *out = {g.device, g.slot};
  return true;
}

// The device of a context handle rgpu gave out, or -1.
int device_of(CUcontext ctx) {
  CurrentContext c;
  return context_of(ctx, &c) ? c.device : -1;
}

CUcontext handle_of(CurrentContext c) {
  CUgreenCtx g = green_context_in_slot(c.device, c.green_slot);
  return g ? context_of_green(g) : primary_context(c.device);
}

CUresult check_device(CUdevice dev) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (dev < 0 || dev >= Runtime::get().device_count() || dev >= kMaxDevices) return CUDA_ERROR_INVALID_DEVICE;
  return CUDA_SUCCESS;
}

CUresult release(CUdevice dev) {
  if (CUresult e = check_device(dev)) return e;
  std::lock_guard lock(g_mutex);
  if (g_primary[dev].retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --g_primary[dev].retained;
  return CUDA_SUCCESS;
}

}  // namespace

CUcontext rgpu::client::primary_context(int device) { return reinterpret_cast<CUcontext>(&g_primary[device]); }

int rgpu::client::context_device(CUcontext ctx) { return device_of(ctx); }
int rgpu::client::context_or_current_device(CUcontext ctx) {
  return ctx ? device_of(ctx) : Runtime::current_device();
}

extern "C" CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_device(dev)) return e;
  std::lock_guard lock(g_mutex);
  ++g_primary[dev].retained;
  *pctx = primary_context(dev);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return release(dev); }

// Resetting the primary context frees everything the device holds for this
// program, which is what cudaDeviceReset does on the server.
extern "C" CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  KeepLastError keep;
  if (CUresult e = check_device(dev)) return e;
  CurrentContext was = current();
  Runtime::set_current_device(dev);
  cudaError_t e = cudaDeviceReset();
  make_current(was);
  if (e == cudaSuccess) {
    {
      std::lock_guard lock(g_mutex);
      g_primary[dev].flags = 0;
    }
    // NVIDIA's runtime (in a library or a static build) forgets its state
    // for the context, as it does when NVIDIA's driver resets it.
    release_context_storage(primary_context(dev));
  }
  return to_cu(e);
}

extern "C" CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_device(dev)) return e;
  std::lock_guard lock(g_mutex);
  *flags = g_primary[dev].flags;
  *active = g_primary[dev].retained > 0;
  return CUDA_SUCCESS;
}

// The flags are kept and reported; the server's context keeps its own.
extern "C" CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  if (CUresult e = check_device(dev)) return e;
  std::lock_guard lock(g_mutex);
  g_primary[dev].flags = flags;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = cuDevicePrimaryCtxRetain(pctx, dev)) return e;
  t_pushed->push_back(current());
  Runtime::set_current_device(dev);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags,
                                           CUdevice dev) {
  // Execution-affinity and CIG parameters need a context of its own; empty
  // parameters (NVIDIA's samples pass a zeroed struct) ask for nothing.
  if (ctxCreateParams) {
    if (ctxCreateParams->numExecAffinityParams < 0) return CUDA_ERROR_INVALID_VALUE;
    if (ctxCreateParams->numExecAffinityParams > 0 || ctxCreateParams->cigParams) return CUDA_ERROR_NOT_SUPPORTED;
  }
  return cuCtxCreate_v2(pctx, flags, dev);
}

extern "C" CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx) {
  int dev = primary_device(ctx);
  if (dev < 0) return CUDA_ERROR_INVALID_VALUE;
  return release(dev);
}

extern "C" CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  *pctx = handle_of(current());
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  // NULL unbinds the context; the next call binds the device's primary one.
  if (!ctx) {
    Runtime::set_current_device(Runtime::current_device());
    return CUDA_SUCCESS;
  }
  CurrentContext c;
  if (!context_of(ctx, &c)) return CUDA_ERROR_INVALID_CONTEXT;
  make_current(c);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  CurrentContext c;
  if (!context_of(ctx, &c)) return CUDA_ERROR_INVALID_CONTEXT;
  t_pushed->push_back(current());
  make_current(c);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext* pctx) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (t_pushed->empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx) *pctx = handle_of(current());
  make_current(t_pushed->back());
  t_pushed->pop_back();
  return CUDA_SUCCESS;
}

// The flags the primary context was given (cudaSetDeviceFlags sets them);
// mapped host memory is always on in CUDA 13, as NVIDIA's driver reports.
extern "C" CUresult CUDAAPI cuCtxGetFlags(unsigned int* flags) {
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  std::lock_guard lock(g_mutex);
  *flags = g_primary[Runtime::current_device()].flags | CU_CTX_MAP_HOST;
  return CUDA_SUCCESS;
}

// Sets the current context's flags, which are its primary context's.
extern "C" CUresult CUDAAPI cuCtxSetFlags(unsigned int flags) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  std::lock_guard lock(g_mutex);
  g_primary[Runtime::current_device()].flags = flags;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  *device = Runtime::current_device();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxSynchronize() {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(cudaDeviceSynchronize());
}

// CUlimit and cudaLimit, CUfunc_cache and cudaFuncCache number alike.
extern "C" CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(cudaDeviceSetLimit(static_cast<cudaLimit>(limit), value));
}

extern "C" CUresult CUDAAPI cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(cudaDeviceGetLimit(pvalue, static_cast<cudaLimit>(limit)));
}

extern "C" CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(config)));
}

extern "C" CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(cudaDeviceGetCacheConfig(reinterpret_cast<cudaFuncCache*>(pconfig)));
}

extern "C" CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(cudaDeviceGetStreamPriorityRange(leastPriority, greatestPriority));
}

extern "C" CUresult CUDAAPI cuCtxResetPersistingL2Cache() {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(cudaCtxResetPersistingL2Cache());
}

// A created context is the device's primary one (see the top of this file):
// execution-affinity parameters would need a context of its own.
extern "C" CUresult CUDAAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                           unsigned int flags, CUdevice dev) {
  if (numParams < 0 || (numParams > 0 && !paramsArray)) return CUDA_ERROR_INVALID_VALUE;
  if (numParams > 0) return CUDA_ERROR_NOT_SUPPORTED;
  return cuCtxCreate_v2(pctx, flags, dev);
}

extern "C" CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  int dev = context_or_current_device(ctx);
  if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
  *device = dev;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  CurrentContext c = current();
  if (ctx && !context_of(ctx, &c)) return CUDA_ERROR_INVALID_CONTEXT;
  CurrentContext was = current();
  make_current(c);
  cudaError_t e = cudaDeviceSynchronize();
  make_current(was);
  return to_cu(e);
}

// The pre-CUDA 4 usage count: attaching retains the current context.
extern "C" CUresult CUDAAPI cuCtxAttach(CUcontext* pctx, unsigned int flags) {
  if (!pctx || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return cuDevicePrimaryCtxRetain(pctx, Runtime::current_device());
}

extern "C" CUresult CUDAAPI cuCtxDetach(CUcontext ctx) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  int dev = primary_device(ctx);
  if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
  return release(dev);
}
