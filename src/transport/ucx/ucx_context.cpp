#include "transport/ucx/ucx_context.hpp"

#include <string>

#include "transport/transport.hpp"

namespace rgpu::transport::ucx {
namespace {

ucp_context_h create_context() {
  ucp_config_t* config = nullptr;
  if (ucs_status_t s = ucp_config_read(nullptr, nullptr, &config); s != UCS_OK)
    throw TransportError(std::string("UCX configuration: ") + ucs_status_string(s));
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  // Each connection has a worker of its own, used by its own threads.
  params.mt_workers_shared = 1;
  ucp_context_h context = nullptr;
  ucs_status_t s = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (s != UCS_OK) throw TransportError(std::string("UCX initialisation failed: ") + ucs_status_string(s));
  return context;
}

}  // namespace

ucp_context_h context() {
  // Never cleaned up: connections may outlive static destructors (threads
  // of the application still running at exit).
  static ucp_context_h context = create_context();
  return context;
}

bool reaches_gpu_memory() {
  static const bool reaches = [] {
    ucp_context_attr_t attr{};
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    return ucp_context_query(context(), &attr) == UCS_OK && (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA));
  }();
  return reaches;
}

}  // namespace rgpu::transport::ucx
