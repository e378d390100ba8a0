// Green contexts and device resources: SM resources of a device, split into
// groups, made into descriptors and green contexts on the server.
//
// A CUdevResource the application holds is the server's, with a token in
// place of the driver's private bytes (the server keeps the real struct,
// see server/worker/green_context_table.hpp) and the client's device index
// beside it, so a resource names its device and server wherever it is
// copied. Descriptors are RemoteObjects like streams; green contexts are
// GreenContexts (green_context_handles.hpp). Streams of a green context are
// ordinary rgpu streams. A green context made current (cuCtxFromGreenCtx,
// cuCtxSetCurrent) makes every later call of the thread on its device run
// in it on the server, the NULL stream being the green context's own.
#include "client/cuda/cuda_api.hpp"

#include <cstring>
#include <vector>

#include "client/core/call.hpp"
#include "client/core/context_constants.hpp"
#include "client/core/handles.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/green_context_handles.hpp"
#include "client/cuda/primary_context.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// Where a resource keeps what the client added to the server's token.
struct ResourceOrigin {
  uint64_t token;  // the server's
  int32_t device;  // virtual device index
  uint32_t magic;
};
constexpr uint32_t kOriginMagic = 0x52444752;  // "RGDR"
static_assert(sizeof(ResourceOrigin) <= sizeof(CUdevResource::_internal_padding));

HandleRegistry<CUdevResourceDesc>& descs() {
  static auto* r = new HandleRegistry<CUdevResourceDesc>;
  return *r;
}

// A resource from the server's reply, marked as of `device`.
CUdevResource take_resource(Call& call, int device) {
  auto r = call.reply().get<CUdevResource>();
  ResourceOrigin o;
  std::memcpy(&o, r._internal_padding, sizeof o);
  o.device = device;
  o.magic = kOriginMagic;
  std::memcpy(r._internal_padding, &o, sizeof o);
  return r;
}

CUresult read_resource(const CUdevResource& r, ResourceOrigin* o) {
  // The application's bytes: any number (protocol/wire_enum.hpp).
  if (proto::enum_number(r.type) != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  std::memcpy(o, r._internal_padding, sizeof *o);
  if (o->magic != kOriginMagic || o->device < 0 || o->device >= Runtime::get().device_count())
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// The green context current to this thread, if any.
bool current_green(GreenContext* out) {
  CUgreenCtx g = green_context_in_slot(Runtime::current_device(), Runtime::current_green_slot());
  return g && find_green_context(g, out);
}

CUresult check_device(CUdevice dev) {
  if (CUresult e = driver_ready()) return e;
  if (dev < 0 || dev >= Runtime::get().device_count()) return CUDA_ERROR_INVALID_DEVICE;
  return CUDA_SUCCESS;
}

// A resource of a device (slot 0) or of a green context.
CUresult get_resource(int device, uint16_t slot, CUdevResource* resource, CUdevResourceType type) {
  return to_cu(api([&]() -> cudaError_t {
    Call call(slot ? proto::kOpGreenCtxGetDevResource : proto::kOpDeviceGetDevResource);
    int32_t remote;
    if (cudaError_t e = call.to_device(device, &remote)) return e;
    call.quiet();
    if (slot) call.args().put<uint16_t>(slot);
    call.args().put<int32_t>(type);
    if (cudaError_t e = call.run()) return e;
    *resource = take_resource(call, device);
    return cudaSuccess;
  }));
}

}  // namespace

extern "C" CUresult CUDAAPI cuDeviceGetDevResource(CUdevice device, CUdevResource* resource, CUdevResourceType type) {
  KeepLastError keep;
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_device(device)) return e;
  return get_resource(device, 0, resource, type);
}

extern "C" CUresult CUDAAPI cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource* resource, CUdevResourceType type) {
  KeepLastError keep;
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (!find_green_context(hCtx, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  return get_resource(g.device, g.slot, resource, type);
}

// NULL is the current context; a green context's CUcontext has its resources.
extern "C" CUresult CUDAAPI cuCtxGetDevResource(CUcontext hCtx, CUdevResource* resource, CUdevResourceType type) {
  KeepLastError keep;
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (hCtx ? find_green_context(hCtx, &g) : current_green(&g)) return get_resource(g.device, g.slot, resource, type);
  int device = context_or_current_device(hCtx);
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  return get_resource(device, 0, resource, type);
}

extern "C" CUresult CUDAAPI cuDevSmResourceSplitByCount(CUdevResource* result, unsigned int* nbGroups,
                                                        const CUdevResource* input, CUdevResource* remaining,
                                                        unsigned int useFlags, unsigned int minCount) {
  KeepLastError keep;
  if (!nbGroups || !input || (result && *nbGroups == 0)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  ResourceOrigin o;
  if (CUresult e = read_resource(*input, &o)) return e;
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpDevSmResourceSplit);
    int32_t remote;
    if (cudaError_t e = call.to_device(o.device, &remote)) return e;
    call.args()
        .put<uint64_t>(o.token)
        .put<uint32_t>(result ? *nbGroups : 0)
        .put<uint8_t>(result != nullptr)
        .put<uint8_t>(remaining != nullptr)
        .put<uint32_t>(useFlags)
        .put<uint32_t>(minCount);
    if (cudaError_t e = call.run()) return e;
    auto made = call.reply().get<uint32_t>();
    if (result && made > *nbGroups) return cudaErrorInvalidValue;  // a confused server
    for (unsigned i = 0; result && i < made; ++i) result[i] = take_resource(call, o.device);
    if (remaining) *remaining = take_resource(call, o.device);
    *nbGroups = made;
    return cudaSuccess;
  }));
}

extern "C" CUresult CUDAAPI cuDevResourceGenerateDesc(CUdevResourceDesc* phDesc, CUdevResource* resources,
                                                      unsigned int nbResources) {
  KeepLastError keep;
  if (!phDesc || !resources || nbResources == 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  std::vector<uint64_t> tokens(nbResources);
  int device = -1;
  for (unsigned i = 0; i < nbResources; ++i) {
    ResourceOrigin o;
    if (CUresult e = read_resource(resources[i], &o)) return e;
    // Resources of one descriptor come from one device.
    if (device >= 0 && o.device != device) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    device = o.device;
    tokens[i] = o.token;
  }
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpDevResourceGenerateDesc);
    int32_t remote;
    if (cudaError_t e = call.to_device(device, &remote)) return e;
    call.args().put<uint32_t>(nbResources);
    for (uint64_t t : tokens) call.args().put<uint64_t>(t);
    if (cudaError_t e = call.run()) return e;
    *phDesc = descs().add(device, call.reply().get<uint64_t>());
    return cudaSuccess;
  }));
}

// Like CUDA's, a green context holds a reference to its device's primary
// context until it is destroyed.
extern "C" CUresult CUDAAPI cuGreenCtxCreate(CUgreenCtx* phCtx, CUdevResourceDesc desc, CUdevice dev,
                                             unsigned int flags) {
  KeepLastError keep;
  if (!phCtx) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_device(dev)) return e;
  RemoteObject d;
  if (!descs().find(desc, &d) || d.device != dev) return CUDA_ERROR_INVALID_VALUE;
  CUcontext primary;
  if (CUresult e = cuDevicePrimaryCtxRetain(&primary, dev)) return e;
  CUresult e = to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpGreenCtxCreate);
    int32_t remote;
    if (cudaError_t e = call.to_device(dev, &remote)) return e;
    call.args().put<uint64_t>(d.remote).put<uint32_t>(flags);
    if (cudaError_t e = call.run()) return e;
    auto slot = call.reply().get<uint16_t>();
    auto id = call.reply().get<uint64_t>();
    *phCtx = add_green_context(dev, slot, id);
    return *phCtx ? cudaSuccess : cudaErrorMemoryAllocation;
  }));
  if (e != CUDA_SUCCESS) cuDevicePrimaryCtxRelease_v2(dev);
  return e;
}

// The calling thread leaves the green context if it is current; other
// threads' calls in it fail from now on (CUDA_ERROR_INVALID_CONTEXT).
extern "C" CUresult CUDAAPI cuGreenCtxDestroy(CUgreenCtx hCtx) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (!find_green_context(hCtx, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  CUresult e = to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpGreenCtxDestroy);
    int32_t remote;
    if (cudaError_t e = call.to_device(g.device, &remote)) return e;
    call.args().put<uint16_t>(g.slot);
    cudaError_t status = call.run();
    // A later green context may take the slot (and the server's answers).
    ContextConstants::get().forget_device(g.device);
    return status;
  }));
  if (e != CUDA_SUCCESS) return e;
  if (Runtime::current_device() == g.device && Runtime::current_green_slot() == g.slot)
    Runtime::set_current_device(g.device);
  remove_green_context(hCtx);
  return cuDevicePrimaryCtxRelease_v2(g.device);
}

extern "C" CUresult CUDAAPI cuCtxFromGreenCtx(CUcontext* pContext, CUgreenCtx hCtx) {
  if (!pContext) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (!find_green_context(hCtx, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  *pContext = context_of_green(hCtx);
  return CUDA_SUCCESS;
}

// NULL names the current green context.
extern "C" CUresult CUDAAPI cuGreenCtxGetId(CUgreenCtx greenCtx, unsigned long long* greenCtxId) {
  if (!greenCtxId) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (greenCtx ? !find_green_context(greenCtx, &g) : !current_green(&g)) return CUDA_ERROR_INVALID_CONTEXT;
  *greenCtxId = g.id;
  return CUDA_SUCCESS;
}

// Posted, as cuEventRecord is. The event must be of the green context's
// device (its primary context), as CUDA requires.
extern "C" CUresult CUDAAPI cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (!find_green_context(hCtx, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpGreenCtxRecordEvent);
    uint64_t event;
    if (cudaError_t e = call.to_event(reinterpret_cast<cudaEvent_t>(hEvent), &event)) return e;
    if (call.device_index() != g.device) return cudaErrorInvalidResourceHandle;
    call.args().put<uint16_t>(g.slot).put<uint64_t>(event);
    return call.post();
  }));
}

// The event may be of another device of the green context's server; one of
// another server cannot be waited for there.
extern "C" CUresult CUDAAPI cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (!find_green_context(hCtx, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  RemoteObject ev;
  if (!events().find(reinterpret_cast<cudaEvent_t>(hEvent), &ev)) return CUDA_ERROR_INVALID_HANDLE;
  Runtime& rt = Runtime::get();
  if (rt.device(ev.device)->session != rt.device(g.device)->session) {
    RGPU_LOG(warn, "cuGreenCtxWaitEvent: the event is of another server than the green context");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpGreenCtxWaitEvent);
    int32_t remote;
    if (cudaError_t e = call.to_device(g.device, &remote)) return e;
    call.args().put<uint16_t>(g.slot).put<uint64_t>(ev.remote);
    return call.post();
  }));
}

extern "C" CUresult CUDAAPI cuGreenCtxStreamCreate(CUstream* phStream, CUgreenCtx greenCtx, unsigned int flags,
                                                   int priority) {
  KeepLastError keep;
  if (!phStream) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  GreenContext g;
  if (!find_green_context(greenCtx, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!(flags & CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpGreenCtxStreamCreate);
    int32_t remote;
    if (cudaError_t e = call.to_device(g.device, &remote)) return e;
    call.args().put<uint16_t>(g.slot).put<uint32_t>(flags).put<int32_t>(priority);
    if (cudaError_t e = call.run()) return e;
    *phStream = reinterpret_cast<CUstream>(streams().add(g.device, call.reply().get<uint64_t>()));
    return cudaSuccess;
  }));
}

// The NULL and special streams are of the thread's current context.
extern "C" CUresult CUDAAPI cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx* phCtx) {
  KeepLastError keep;
  if (!phCtx) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  auto s = reinterpret_cast<cudaStream_t>(hStream);
  if (is_default_stream(s)) {
    *phCtx = green_context_in_slot(Runtime::current_device(), Runtime::current_green_slot());
    return CUDA_SUCCESS;
  }
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpStreamGetGreenCtx);
    uint64_t remote;
    if (cudaError_t e = call.to_stream(s, &remote)) return e;
    call.quiet();
    call.args().put<uint64_t>(remote);
    if (cudaError_t e = call.run()) return e;
    *phCtx = green_context_in_slot(call.device_index(), call.reply().get<uint16_t>());
    return cudaSuccess;
  }));
}
