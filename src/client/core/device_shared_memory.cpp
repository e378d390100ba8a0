#include "client/core/device_shared_memory.hpp"

#include <vector>

#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {

std::optional<transport::SharedMemory> share_with_device(int device, size_t bytes, const char* purpose) {
  VirtualDevice* d = Runtime::get().device(device);
  if (!d || !d->session->shares_memory()) return std::nullopt;
  transport::SharedMemory m;
  try {
    m = transport::create_shared_memory(bytes);
  } catch (const transport::TransportError& e) {
    RGPU_LOG(warn, "no %s: %s", purpose, e.what());
    return std::nullopt;
  }
  proto::Writer w;
  w.put<uint64_t>(reinterpret_cast<uint64_t>(m.base)).put<uint64_t>(m.size);
  std::vector<uint8_t> reply;
  if (d->session->call_with_fd(proto::kOpHostRegisterShared, d->remote, w.bytes(), m.fd, reply) != cudaSuccess) {
    RGPU_LOG(warn, "no %s: the server did not take the memory", purpose);
    transport::release_shared_memory(m);
    return std::nullopt;
  }
  return m;
}

}  // namespace rgpu::client
