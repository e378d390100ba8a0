// Peer access and peer copies. GPUs of one server are peers as that server's
// driver says (the calls are forwarded); GPUs of different servers can never
// reach each other's memory, so access is "no" and a peer copy between them
// goes through client memory (cross_server_copy).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/handles.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/per_thread_stream.hpp"
#include "client/cudart/copy_engine.hpp"
#include "client/cudart/cross_server_copy.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// Both devices exist; *same_server says whether one server holds them.
cudaError_t locate(int a, int b, bool* same_server) {
  Runtime& rt = Runtime::get();
  if (cudaError_t e = rt.ensure_init()) return e;
  VirtualDevice* da = rt.device(a);
  VirtualDevice* db = rt.device(b);
  if (!da || !db) return cudaErrorInvalidDevice;
  *same_server = da->session == db->session;
  return cudaSuccess;
}

// Capabilities of atomic operations on another device's or the host's
// memory, answered by the server of the routed device.
cudaError_t atomic_capabilities(Call& call, unsigned* caps, unsigned count) {
  if (cudaError_t e = call.quiet().run()) return e;
  auto bytes = call.reply().get_bytes();
  if (bytes.size() != count * sizeof(unsigned)) return cudaErrorUnknown;
  std::memcpy(caps, bytes.data(), bytes.size());
  return cudaSuccess;
}

// The device that owns [p, p + n) must be `device`.
cudaError_t check_owner(const void* p, size_t n, int device) {
  auto r = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(p), n);
  return r && r->device == device ? cudaSuccess : cudaErrorInvalidValue;
}

// A stream of either device orders the copy, as in CUDA. One server copies
// between its GPUs itself; between servers the data goes through client
// memory once the stream has reached the copy, so it stays in stream order.
cudaError_t copy_peer(void* dst, int dst_device, const void* src, int src_device, size_t n, cudaStream_t stream,
                      bool async) {
  bool same;
  if (cudaError_t e = locate(dst_device, src_device, &same)) return e;
  if (n == 0) return cudaSuccess;
  if (cudaError_t e = check_owner(dst, n, dst_device)) return e;
  if (cudaError_t e = check_owner(src, n, src_device)) return e;
  std::optional<int> ordering = created_stream_device(stream);
  if (ordering && *ordering != dst_device && *ordering != src_device) return cudaErrorInvalidValue;
  if (!same) {
    if (cudaError_t e = cudaStreamSynchronize(stream)) return e;
    return copy_across_servers(dst, src, n);
  }
  return copy_on_server(ordering.value_or(dst_device), dst, src, n, stream, async);
}

}  // namespace

extern "C" cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  return api([&]() -> cudaError_t {
    if (!canAccessPeer) return cudaErrorInvalidValue;
    bool same;
    if (cudaError_t e = locate(device, peerDevice, &same)) return e;
    if (!same) {
      *canAccessPeer = 0;
      return cudaSuccess;
    }
    Call call(proto::kOpDeviceCanAccessPeer);
    int32_t remote, remote_peer;
    if (cudaError_t e = call.to_device(peerDevice, &remote_peer)) return e;
    if (cudaError_t e = call.to_device(device, &remote)) return e;
    call.args().put<int32_t>(remote).put<int32_t>(remote_peer);
    if (cudaError_t e = call.quiet().run()) return e;
    *canAccessPeer = call.reply().get<int32_t>();
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  return api([&]() -> cudaError_t {
    int current = Runtime::current_device();
    bool same;
    if (cudaError_t e = locate(current, peerDevice, &same)) return e;
    if (flags) return cudaErrorInvalidValue;
    if (!same) return cudaErrorPeerAccessUnsupported;
    Call call(proto::kOpDeviceEnablePeerAccess);
    int32_t remote_peer;
    if (cudaError_t e = call.to_device(peerDevice, &remote_peer)) return e;
    if (cudaError_t e = call.to_current_device()) return e;
    call.args().put<int32_t>(remote_peer).put<uint32_t>(flags);
    return call.run();
  });
}

extern "C" cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  return api([&]() -> cudaError_t {
    int current = Runtime::current_device();
    bool same;
    if (cudaError_t e = locate(current, peerDevice, &same)) return e;
    if (!same) return cudaErrorPeerAccessNotEnabled;
    Call call(proto::kOpDeviceDisablePeerAccess);
    int32_t remote_peer;
    if (cudaError_t e = call.to_device(peerDevice, &remote_peer)) return e;
    if (cudaError_t e = call.to_current_device()) return e;
    call.args().put<int32_t>(remote_peer);
    return call.run();
  });
}

extern "C" cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attr, int srcDevice, int dstDevice) {
  return api([&]() -> cudaError_t {
    if (!value) return cudaErrorInvalidValue;
    bool same;
    if (cudaError_t e = locate(srcDevice, dstDevice, &same)) return e;
    if (!same) {
      if (attr < cudaDevP2PAttrPerformanceRank || attr > cudaDevP2PAttrOnlyPartialNativeAtomicSupported)
        return cudaErrorInvalidValue;
      *value = 0;  // no link between servers' GPUs
      return cudaSuccess;
    }
    Call call(proto::kOpDeviceGetP2PAttribute);
    int32_t remote_src, remote_dst;
    if (cudaError_t e = call.to_device(dstDevice, &remote_dst)) return e;
    if (cudaError_t e = call.to_device(srcDevice, &remote_src)) return e;
    call.args().put<int32_t>(attr).put<int32_t>(remote_src).put<int32_t>(remote_dst);
    if (cudaError_t e = call.quiet().run()) return e;
    *value = call.reply().get<int32_t>();
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaDeviceGetP2PAtomicCapabilities(unsigned int* capabilities,
                                                          const cudaAtomicOperation* operations, unsigned int count,
                                                          int srcDevice, int dstDevice) {
  return api([&]() -> cudaError_t {
    if (!capabilities || !operations || count == 0) return cudaErrorInvalidValue;
    bool same;
    if (cudaError_t e = locate(srcDevice, dstDevice, &same)) return e;
    if (!same) {
      std::fill(capabilities, capabilities + count, 0u);
      return cudaSuccess;
    }
    Call call(proto::kOpDeviceGetP2PAtomicCapabilities);
    int32_t remote_src, remote_dst;
    if (cudaError_t e = call.to_device(dstDevice, &remote_dst)) return e;
    if (cudaError_t e = call.to_device(srcDevice, &remote_src)) return e;
    call.args().put_bytes(operations, count * sizeof *operations).put<int32_t>(remote_src).put<int32_t>(remote_dst);
    return atomic_capabilities(call, capabilities, count);
  });
}

// The GPU reaches client memory only where the server maps it (shm); over
// other transports no atomic operation on host memory is possible.
extern "C" cudaError_t cudaDeviceGetHostAtomicCapabilities(unsigned int* capabilities,
                                                           const cudaAtomicOperation* operations, unsigned int count,
                                                           int device) {
  return api([&]() -> cudaError_t {
    if (!capabilities || !operations || count == 0) return cudaErrorInvalidValue;
    Call call(proto::kOpDeviceGetHostAtomicCapabilities);
    int32_t remote;
    if (cudaError_t e = call.to_device(device, &remote)) return e;
    if (!call.device()->session->shares_memory()) {
      std::fill(capabilities, capabilities + count, 0u);
      return cudaSuccess;
    }
    call.args().put_bytes(operations, count * sizeof *operations).put<int32_t>(remote);
    return atomic_capabilities(call, capabilities, count);
  });
}

extern "C" cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
  return api([&] { return copy_peer(dst, dstDevice, src, srcDevice, count, nullptr, false); });
}

extern "C" cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                           cudaStream_t stream) {
  return api([&] { return copy_peer(dst, dstDevice, src, srcDevice, count, stream, true); });
}
