#include "server/backend/cuda/cuda_green_contexts.hpp"

namespace rgpu::server {
namespace {

CUgreenCtx green_of(GreenContextApi::Handle h) { return reinterpret_cast<CUgreenCtx>(h); }
template <typename T>
GreenContextApi::Handle handle(T* p) {
  return reinterpret_cast<GreenContextApi::Handle>(p);
}

}  // namespace

int32_t CudaGreenContexts::device_resource(int device, CUdevResourceType type, CUdevResource* out) {
  CUdevice dev;
  if (CUresult e = cuDeviceGet(&dev, device)) return e;
  return cuDeviceGetDevResource(dev, out, type);
}

int32_t CudaGreenContexts::green_resource(Handle green, CUdevResourceType type, CUdevResource* out) {
  return cuGreenCtxGetDevResource(green_of(green), out, type);
}

int32_t CudaGreenContexts::split_by_count(std::span<CUdevResource> result, unsigned* groups,
                                          const CUdevResource& input, CUdevResource* remaining, unsigned flags,
                                          unsigned min_count) {
  return cuDevSmResourceSplitByCount(result.empty() ? nullptr : result.data(), groups, &input, remaining, flags,
                                     min_count);
}

int32_t CudaGreenContexts::generate_desc(Handle* desc, std::span<CUdevResource> resources) {
  CUdevResourceDesc d = nullptr;
  CUresult e = cuDevResourceGenerateDesc(&d, resources.data(), static_cast<unsigned>(resources.size()));
  *desc = handle(d);
  return e;
}

int32_t CudaGreenContexts::create(Handle* green, Handle desc, int device, unsigned flags) {
  CUdevice dev;
  if (CUresult e = cuDeviceGet(&dev, device)) return e;
  CUgreenCtx g = nullptr;
  CUresult e = cuGreenCtxCreate(&g, reinterpret_cast<CUdevResourceDesc>(desc), dev, flags);
  *green = handle(g);
  return e;
}

int32_t CudaGreenContexts::destroy(Handle green) { return cuGreenCtxDestroy(green_of(green)); }

int32_t CudaGreenContexts::id(Handle green, unsigned long long* id) { return cuGreenCtxGetId(green_of(green), id); }

int32_t CudaGreenContexts::record_event(Handle green, Handle event) {
  return cuGreenCtxRecordEvent(green_of(green), reinterpret_cast<CUevent>(event));
}

int32_t CudaGreenContexts::wait_event(Handle green, Handle event) {
  return cuGreenCtxWaitEvent(green_of(green), reinterpret_cast<CUevent>(event));
}

int32_t CudaGreenContexts::stream_create(Handle* stream, Handle green, unsigned flags, int priority) {
  CUstream s = nullptr;
  CUresult e = cuGreenCtxStreamCreate(&s, green_of(green), flags, priority);
  *stream = handle(s);
  return e;
}

int32_t CudaGreenContexts::stream_green(Handle stream, Handle* green) {
  CUgreenCtx g = nullptr;
  CUresult e = cuStreamGetGreenCtx(reinterpret_cast<CUstream>(stream), &g);
  *green = handle(g);
  return e;
}

int32_t CudaGreenContexts::make_current(Handle green) {
  CUcontext ctx = nullptr;
  if (CUresult e = cuCtxFromGreenCtx(&ctx, green_of(green))) return e;
  return cuCtxSetCurrent(ctx);
}

}  // namespace rgpu::server
