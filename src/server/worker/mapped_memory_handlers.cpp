// Zero-copy mapped host memory (shm): client page-locked memory this worker
// mapped and pinned has a device address kernels may use in place. Handing
// that address out enters the whole region into the session's table of
// mapped memory, so copies and memsets naming it validate.
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

int32_t host_get_device_pointer(SessionContext& s, Request& req, proto::Writer& out) {
  auto host = req.args.get<uint64_t>();
  req.args.expect_end();
  auto region = s.shared_region(host);
  if (!region) return cudaErrorInvalidValue;
  auto [client_base, shared] = *region;
  DevPtr device = 0;
  if (int32_t e = s.backend().host_get_device_pointer(&device, shared.local)) return e;
  s.mapped.add(device, shared.size);
  out.put<uint64_t>(device + (host - client_base)).put<uint64_t>(device).put<uint64_t>(shared.size);
  return cudaSuccess;
}

}  // namespace

void register_mapped_memory_handlers(Dispatcher& d) {
  d.add(proto::kOpHostGetDevicePointer, host_get_device_pointer);
}

}  // namespace rgpu::server
