// Op number -> handler. Handlers decode their arguments, check them against
// the session, call the backend and encode outputs into `out`; the worker
// sends the reply (status, deferred error, outputs).
#pragma once
#include <cstdint>
#include <vector>

#include "protocol/codec.hpp"
#include "server/worker/request.hpp"

namespace rgpu::server {

class SessionContext;

// Returns a cudaError_t value. A handler that streams its own reply (device
// to host copies) sets SessionContext::reply_sent.
using Handler = int32_t (*)(SessionContext& s, Request& req, proto::Writer& out);

class Dispatcher {
 public:
  Dispatcher();
  void add(uint16_t op, Handler h);
  Handler find(uint16_t op) const { return handlers_[op]; }
  // Runs a request's handler in the call's context (`green`: the session
  // slot of its green context, 0 for the device's primary one; `current`:
  // the device the calling thread has current, updated). Returns the call's
  // status; malformed arguments are cudaErrorInvalidValue.
  int32_t run(SessionContext& s, Request& req, proto::Writer& out, uint16_t green, int& current) const;

 private:
  std::vector<Handler> handlers_;
};

// Each file of handlers registers its own ops.
void register_device_handlers(Dispatcher& d);
void register_memory_handlers(Dispatcher& d);
void register_move_handlers(Dispatcher& d);
void register_copy_handlers(Dispatcher& d);
void register_stream_event_handlers(Dispatcher& d);
void register_module_handlers(Dispatcher& d);
void register_driver_module_handlers(Dispatcher& d);
void register_shared_memory_handlers(Dispatcher& d);
void register_pool_handlers(Dispatcher& d);
void register_driver_memop_link_handlers(Dispatcher& d);
void register_decompression_handlers(Dispatcher& d);
void register_forwarded_handlers(Dispatcher& d);  // generated
void register_array_handlers(Dispatcher& d);
void register_green_context_handlers(Dispatcher& d);
void register_copy_3d_handlers(Dispatcher& d);
void register_texture_handlers(Dispatcher& d);
void register_texture_reference_handlers(Dispatcher& d);
void register_cluster_occupancy_handlers(Dispatcher& d);
void register_peer_handlers(Dispatcher& d);
void register_mapped_memory_handlers(Dispatcher& d);
void register_managed_memory_handlers(Dispatcher& d);
void register_async_notification_handlers(Dispatcher& d);
void register_vmm_handlers(Dispatcher& d);
void register_ipc_handlers(Dispatcher& d);
void register_shareable_handle_handlers(Dispatcher& d);
void register_graph_handlers(Dispatcher& d);
void register_graph_move_handlers(Dispatcher& d);
void register_external_handlers(Dispatcher& d);
void register_nccl_handlers(Dispatcher& d);

}  // namespace rgpu::server
