#include "server/worker/dispatcher.hpp"

#include "protocol/op_names.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// Makes the call's context current to this thread: the device's primary
// context (set_device, skipped when it already is), or the green context in
// the session slot `green`, which may have been destroyed since the last
// call and so is made current every time.
int32_t enter_context(SessionContext& s, int device, uint16_t green, int& current) {
  if (green == 0) {
    if (device == current) return cudaSuccess;
    if (int32_t e = s.backend().set_device(device)) return e;
    current = device;
    return cudaSuccess;
  }
  GreenContextTable::Green g;
  if (!s.green.find_green(green, &g) || g.device != device) return CUDA_ERROR_INVALID_CONTEXT;
  current = -1;
  return s.backend().green_contexts().make_current(g.handle);
}

}  // namespace

Dispatcher::Dispatcher() : handlers_(1u << 16, nullptr) {
  register_device_handlers(*this);
  register_memory_handlers(*this);
  register_move_handlers(*this);
  register_copy_handlers(*this);
  register_stream_event_handlers(*this);
  register_module_handlers(*this);
  register_driver_module_handlers(*this);
  register_shared_memory_handlers(*this);
  register_pool_handlers(*this);
  register_driver_memop_link_handlers(*this);
  register_decompression_handlers(*this);
  register_forwarded_handlers(*this);
  register_array_handlers(*this);
  register_copy_3d_handlers(*this);
  register_texture_handlers(*this);
  register_texture_reference_handlers(*this);
  register_cluster_occupancy_handlers(*this);
  register_peer_handlers(*this);
  register_mapped_memory_handlers(*this);
  register_managed_memory_handlers(*this);
  register_async_notification_handlers(*this);
  register_vmm_handlers(*this);
  register_ipc_handlers(*this);
  register_shareable_handle_handlers(*this);
  register_graph_handlers(*this);
  register_graph_move_handlers(*this);
  register_green_context_handlers(*this);
  register_external_handlers(*this);
  register_nccl_handlers(*this);
}

void Dispatcher::add(uint16_t op, Handler h) { handlers_[op] = h; }

int32_t Dispatcher::run(SessionContext& s, Request& req, proto::Writer& out, uint16_t green, int& current) const {
  const proto::FrameHeader& h = req.header();
  Handler handler = find(h.op);
  if (!handler) {
    s.warnings.warn("unknown call", "unknown call %u from %s", h.op, req.connection().peer().c_str());
    return cudaErrorNotSupported;
  }
  if (!s.has_gpu(h.device)) return cudaErrorInvalidDevice;
  if (int32_t e = enter_context(s, h.device, green, current)) return e;
  try {
    return handler(s, req, out);
  } catch (const proto::DecodeError& e) {
    s.warnings.warn("malformed call", "malformed %s from %s: %s", proto::op_name(h.op), req.connection().peer().c_str(),
                    e.what());
    out.clear();
    return cudaErrorInvalidValue;
  }
}

}  // namespace rgpu::server
