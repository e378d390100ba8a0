// Peer access and peer copies: the runtime's paths (cudart/peer.cpp), with
// contexts standing for their devices.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/core/runtime.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/primary_context.hpp"

using namespace rgpu::client;

namespace {

void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

// CUatomicOperation and cudaAtomicOperation number the operations alike.
static_assert(sizeof(CUatomicOperation) == sizeof(cudaAtomicOperation));
const cudaAtomicOperation* rt_ops(const CUatomicOperation* ops) {
  return reinterpret_cast<const cudaAtomicOperation*>(ops);
}

}  // namespace

extern "C" CUresult CUDAAPI cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  return through_runtime([&] { return cudaDeviceCanAccessPeer(canAccessPeer, dev, peerDev); });
}

extern "C" CUresult CUDAAPI cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                                    CUdevice dstDevice) {
  return through_runtime([&] {
    return cudaDeviceGetP2PAttribute(value, static_cast<cudaDeviceP2PAttr>(attrib), srcDevice, dstDevice);
  });
}

extern "C" CUresult CUDAAPI cuDeviceGetP2PAtomicCapabilities(unsigned int* capabilities,
                                                             const CUatomicOperation* operations, unsigned int count,
                                                             CUdevice srcDevice, CUdevice dstDevice) {
  return through_runtime([&] {
    return cudaDeviceGetP2PAtomicCapabilities(capabilities, rt_ops(operations), count, srcDevice, dstDevice);
  });
}

extern "C" CUresult CUDAAPI cuDeviceGetHostAtomicCapabilities(unsigned int* capabilities,
                                                              const CUatomicOperation* operations, unsigned int count,
                                                              CUdevice dev) {
  return through_runtime(
      [&] { return cudaDeviceGetHostAtomicCapabilities(capabilities, rt_ops(operations), count, dev); });
}

// Access from the current context's device to the peer context's.
extern "C" CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  if (CUresult e = driver_ready()) return e;
  int peer = context_device(peerContext);
  if (peer < 0) return CUDA_ERROR_INVALID_CONTEXT;
  return through_runtime([&] { return cudaDeviceEnablePeerAccess(peer, Flags); });
}

extern "C" CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext) {
  if (CUresult e = driver_ready()) return e;
  int peer = context_device(peerContext);
  if (peer < 0) return CUDA_ERROR_INVALID_CONTEXT;
  return through_runtime([&] { return cudaDeviceDisablePeerAccess(peer); });
}

extern "C" CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                         CUcontext srcContext, size_t ByteCount) {
  if (CUresult e = driver_ready()) return e;
  int dst = context_device(dstContext), src = context_device(srcContext);
  if (dst < 0 || src < 0) return CUDA_ERROR_INVALID_CONTEXT;
  return through_runtime([&] { return cudaMemcpyPeer(ptr(dstDevice), dst, ptr(srcDevice), src, ByteCount); });
}

extern "C" CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                              CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  if (CUresult e = driver_ready()) return e;
  int dst = context_device(dstContext), src = context_device(srcContext);
  if (dst < 0 || src < 0) return CUDA_ERROR_INVALID_CONTEXT;
  return through_runtime([&] {
    return cudaMemcpyPeerAsync(ptr(dstDevice), dst, ptr(srcDevice), src, ByteCount,
                               reinterpret_cast<cudaStream_t>(hStream));
  });
}
