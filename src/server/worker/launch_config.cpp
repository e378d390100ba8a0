#include "server/worker/launch_config.hpp"

#include "protocol/wire_enum.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// More than every attribute twice is a malformed request.
constexpr uint32_t kMaxAttributes = 64;

// id: any number off the wire, an enum once checked here (wire_enum.hpp).
int32_t check_attribute(SessionContext& s, proto::EnumNumber<cudaLaunchAttributeID> id,
                        const cudaLaunchAttributeValue& val) {
  auto event_ok = [&](cudaEvent_t e) { return s.valid_event(reinterpret_cast<uint64_t>(e)); };
  switch (id) {
    case cudaLaunchAttributeIgnore:
    case cudaLaunchAttributeCooperative:
    case cudaLaunchAttributeSynchronizationPolicy:
    case cudaLaunchAttributeClusterDimension:
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
    case cudaLaunchAttributeProgrammaticStreamSerialization:
    case cudaLaunchAttributePriority:
    case cudaLaunchAttributeMemSyncDomainMap:
    case cudaLaunchAttributeMemSyncDomain:
    case cudaLaunchAttributePreferredClusterDimension:
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
      return cudaSuccess;
    case cudaLaunchAttributeAccessPolicyWindow: {
      // The window names device memory: it must be the session's own.
      const auto& w = val.accessPolicyWindow;
      return !w.num_bytes || s.owns(reinterpret_cast<uint64_t>(w.base_ptr), w.num_bytes) ? cudaSuccess
                                                                                          : cudaErrorInvalidValue;
    }
    case cudaLaunchAttributeProgrammaticEvent:
      return event_ok(val.programmaticEvent.event) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    case cudaLaunchAttributeLaunchCompletionEvent:
      return event_ok(val.launchCompletionEvent.event) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    default:
      // The graph-only attribute (it hands out a device node address) and
      // unknown ids.
      return cudaErrorInvalidValue;
  }
}

}  // namespace

int32_t read_launch_config(SessionContext& s, proto::Reader& in, LaunchConfig* config) {
  config->grid = in.get<dim3>();
  config->block = in.get<dim3>();
  config->shared_mem = in.get<uint32_t>();
  config->stream = in.get<uint64_t>();
  return s.valid_stream(config->stream) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

int32_t read_launch_attributes(SessionContext& s, proto::Reader& in, LaunchConfig* config) {
  auto n = in.get<uint32_t>();
  if (n > kMaxAttributes) return cudaErrorInvalidValue;
  config->attributes.resize(n);
  for (auto& a : config->attributes) {
    auto id = in.get<proto::EnumNumber<cudaLaunchAttributeID>>();
    auto val = in.get<cudaLaunchAttributeValue>();
    if (int32_t e = check_attribute(s, id, val)) return e;
    a = cudaLaunchAttribute{};
    a.id = static_cast<cudaLaunchAttributeID>(id);
    a.val = val;
  }
  return cudaSuccess;
}

}  // namespace rgpu::server
