#include "server/worker/dispatcher.hpp"

namespace rgpu::server {

Dispatcher::Dispatcher() : handlers_(1u << 16, nullptr) {
  register_device_handlers(*this);
  register_memory_handlers(*this);
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
  register_green_context_handlers(*this);
  register_external_handlers(*this);
}

void Dispatcher::add(uint16_t op, Handler h) { handlers_[op] = h; }

}  // namespace rgpu::server
