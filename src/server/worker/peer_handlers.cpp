// Peer access between GPUs this session holds on this server. Both ordinals
// must be the session's; the client answers for GPUs of other servers.
#include <cstring>
#include <vector>

#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// Atomic capability queries take at most one entry per cudaAtomicOperation.
constexpr uint32_t kMaxAtomicOperations = 64;

int32_t can_access_peer(SessionContext& s, Request& req, proto::Writer& out) {
  auto device = req.args.get<int32_t>();
  auto peer = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(device) || !s.has_gpu(peer)) return cudaErrorInvalidDevice;
  int can = 0;
  if (int32_t e = s.backend().device_can_access_peer(&can, device, peer)) return e;
  out.put<int32_t>(can);
  return cudaSuccess;
}

int32_t enable_peer_access(SessionContext& s, Request& req, proto::Writer&) {
  auto peer = req.args.get<int32_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!s.has_gpu(peer)) return cudaErrorInvalidDevice;
  return s.backend().device_enable_peer_access(peer, flags);
}

int32_t disable_peer_access(SessionContext& s, Request& req, proto::Writer&) {
  auto peer = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(peer)) return cudaErrorInvalidDevice;
  return s.backend().device_disable_peer_access(peer);
}

int32_t p2p_attribute(SessionContext& s, Request& req, proto::Writer& out) {
  auto attr = req.args.get<proto::EnumNumber<cudaDeviceP2PAttr>>();
  auto src = req.args.get<int32_t>();
  auto dst = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(src) || !s.has_gpu(dst)) return cudaErrorInvalidDevice;
  // A number becomes an enum once checked (wire_enum.hpp).
  if (!proto::enum_in_range(attr, cudaDevP2PAttrPerformanceRank, cudaDevP2PAttrOnlyPartialNativeAtomicSupported))
    return cudaErrorInvalidValue;
  int value = 0;
  if (int32_t e = s.backend().device_get_p2p_attribute(&value, static_cast<cudaDeviceP2PAttr>(attr), src, dst))
    return e;
  out.put<int32_t>(value);
  return cudaSuccess;
}

// Decodes the operation list of an atomic capability query.
bool atomic_operations(Request& req, std::vector<cudaAtomicOperation>* ops) {
  auto bytes = req.args.get_bytes();
  if (bytes.size() % sizeof(cudaAtomicOperation) ||
      bytes.size() / sizeof(cudaAtomicOperation) > kMaxAtomicOperations)
    return false;
  ops->resize(bytes.size() / sizeof(cudaAtomicOperation));
  // An empty list has no buffer to copy to (memcpy to null is undefined).
  if (!ops->empty()) std::memcpy(ops->data(), bytes.data(), bytes.size());
  return true;
}

int32_t p2p_atomic_capabilities(SessionContext& s, Request& req, proto::Writer& out) {
  std::vector<cudaAtomicOperation> ops;
  bool ok = atomic_operations(req, &ops);
  auto src = req.args.get<int32_t>();
  auto dst = req.args.get<int32_t>();
  req.args.expect_end();
  if (!ok) return cudaErrorInvalidValue;
  if (!s.has_gpu(src) || !s.has_gpu(dst)) return cudaErrorInvalidDevice;
  std::vector<unsigned> caps(ops.size());
  if (int32_t e = s.backend().device_get_p2p_atomic_capabilities(caps.data(), ops.data(),
                                                                 static_cast<unsigned>(ops.size()), src, dst))
    return e;
  out.put_bytes(caps.data(), caps.size() * sizeof(unsigned));
  return cudaSuccess;
}

int32_t host_atomic_capabilities(SessionContext& s, Request& req, proto::Writer& out) {
  std::vector<cudaAtomicOperation> ops;
  bool ok = atomic_operations(req, &ops);
  auto device = req.args.get<int32_t>();
  req.args.expect_end();
  if (!ok) return cudaErrorInvalidValue;
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  std::vector<unsigned> caps(ops.size());
  if (int32_t e = s.backend().device_get_host_atomic_capabilities(caps.data(), ops.data(),
                                                                  static_cast<unsigned>(ops.size()), device))
    return e;
  out.put_bytes(caps.data(), caps.size() * sizeof(unsigned));
  return cudaSuccess;
}

}  // namespace

void register_peer_handlers(Dispatcher& d) {
  d.add(proto::kOpDeviceCanAccessPeer, can_access_peer);
  d.add(proto::kOpDeviceEnablePeerAccess, enable_peer_access);
  d.add(proto::kOpDeviceDisablePeerAccess, disable_peer_access);
  d.add(proto::kOpDeviceGetP2PAttribute, p2p_attribute);
  d.add(proto::kOpDeviceGetP2PAtomicCapabilities, p2p_atomic_capabilities);
  d.add(proto::kOpDeviceGetHostAtomicCapabilities, host_atomic_capabilities);
}

}  // namespace rgpu::server
