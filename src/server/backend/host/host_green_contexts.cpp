#include "server/backend/host/host_green_contexts.hpp"

#include <algorithm>
#include <cstring>

namespace rgpu::server {
namespace {

thread_local GreenContextApi::Handle t_current = 0;

// What host-test keeps in a resource's driver-internal bytes: its device
// and the split that made it (0: a device's or a green context's whole set,
// which may be split).
struct ResourceTag {
  uint32_t magic;
  int32_t device;
  uint64_t split;
};
constexpr uint32_t kTagMagic = 0x52534d48;  // "HMSR"
static_assert(sizeof(ResourceTag) <= sizeof(CUdevResource::_internal_padding));

CUdevResource sm_resource(int device, unsigned sms, unsigned min, unsigned alignment, uint64_t split) {
  CUdevResource r{};
  r.type = CU_DEV_RESOURCE_TYPE_SM;
  r.sm.smCount = sms;
  r.sm.minSmPartitionSize = min;
  r.sm.smCoscheduledAlignment = alignment;
  ResourceTag tag{kTagMagic, device, split};
  std::memcpy(r._internal_padding, &tag, sizeof tag);
  return r;
}

bool read_tag(const CUdevResource& r, ResourceTag* tag) {
  std::memcpy(tag, r._internal_padding, sizeof *tag);
  return tag->magic == kTagMagic;
}

}  // namespace

GreenContextApi::Handle HostGreenContexts::current() { return t_current; }
void HostGreenContexts::leave_current() { t_current = 0; }

bool HostGreenContexts::find_green(Handle green, SmSet* out) {
  std::lock_guard lock(mutex_);
  auto it = greens_.find(green);
  if (it == greens_.end()) return false;
  *out = it->second;
  return true;
}

int32_t HostGreenContexts::device_resource(int device, CUdevResourceType type, CUdevResource* out) {
  if (device < 0 || device >= devices_) return CUDA_ERROR_INVALID_DEVICE;
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  *out = sm_resource(device, kHostSms, kHostMinSmPartition, kHostSmAlignment, 0);
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::green_resource(Handle green, CUdevResourceType type, CUdevResource* out) {
  SmSet g;
  if (!find_green(green, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  *out = sm_resource(g.device, g.sms, kHostMinSmPartition, kHostSmAlignment, 0);
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::split_by_count(std::span<CUdevResource> result, unsigned* groups,
                                          const CUdevResource& input, CUdevResource* remaining, unsigned flags,
                                          unsigned min_count) {
  constexpr unsigned kKnownFlags =
      CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING | CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;
  if (flags & ~kKnownFlags) return CUDA_ERROR_INVALID_VALUE;
  if (input.type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  ResourceTag tag;
  if (!read_tag(input, &tag)) return CUDA_ERROR_INVALID_VALUE;
  // The driver's documented limitation: a split's outputs are not split
  // again before a green context is made of them.
  if (tag.split != 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  if (min_count > input.sm.smCount) return CUDA_ERROR_INVALID_VALUE;
  const bool fine = flags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING;
  const unsigned min = fine ? 2 : input.sm.minSmPartitionSize;
  const unsigned alignment = fine ? 2 : input.sm.smCoscheduledAlignment;
  unsigned size = std::max(min_count, min);
  size = (size + alignment - 1) / alignment * alignment;
  if (size > input.sm.smCount) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  const unsigned possible = input.sm.smCount / size;
  const unsigned made = result.empty() ? possible : std::min<unsigned>(*groups, possible);
  uint64_t split;
  {
    std::lock_guard lock(mutex_);
    split = next_id_++;
  }
  for (unsigned i = 0; i < made && i < result.size(); ++i)
    result[i] = sm_resource(tag.device, size, min, alignment, split);
  *groups = made;
  if (remaining) *remaining = sm_resource(tag.device, input.sm.smCount - made * size, min, alignment, split);
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::generate_desc(Handle* desc, std::span<CUdevResource> resources) {
  if (resources.empty()) return CUDA_ERROR_INVALID_VALUE;
  SmSet set{-1, 0};
  uint64_t split = 0;
  for (size_t i = 0; i < resources.size(); ++i) {
    const CUdevResource& r = resources[i];
    if (r.type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    ResourceTag tag;
    if (!read_tag(r, &tag)) return CUDA_ERROR_INVALID_VALUE;
    if (i == 0) {
      set.device = tag.device;
      split = tag.split;
    } else if (tag.device != set.device || tag.split != split || split == 0) {
      // Several resources must come out of one split of one device.
      return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    }
    set.sms += r.sm.smCount;
  }
  if (set.sms == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  std::lock_guard lock(mutex_);
  *desc = next_id_++;
  descs_[*desc] = set;
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::create(Handle* green, Handle desc, int device, unsigned flags) {
  if (device < 0 || device >= devices_) return CUDA_ERROR_INVALID_DEVICE;
  if (flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(mutex_);
  auto it = descs_.find(desc);
  if (it == descs_.end() || it->second.device != device) return CUDA_ERROR_INVALID_VALUE;
  *green = next_id_++;
  greens_[*green] = it->second;
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::destroy(Handle green) {
  std::lock_guard lock(mutex_);
  if (greens_.erase(green) == 0) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::id(Handle green, unsigned long long* id) {
  SmSet g;
  if (!find_green(green, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  *id = green;
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::record_event(Handle green, Handle event) {
  SmSet g;
  if (!find_green(green, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  return hooks_.record_event_now(event);
}

int32_t HostGreenContexts::wait_event(Handle green, Handle) {
  SmSet g;
  return find_green(green, &g) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

int32_t HostGreenContexts::stream_create(Handle* stream, Handle green, unsigned flags, int priority) {
  SmSet g;
  if (!find_green(green, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!(flags & CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  return hooks_.create_stream(stream, flags, priority, green);
}

int32_t HostGreenContexts::stream_green(Handle stream, Handle* green) {
  *green = hooks_.stream_context(stream);
  return CUDA_SUCCESS;
}

int32_t HostGreenContexts::make_current(Handle green) {
  SmSet g;
  if (!find_green(green, &g)) return CUDA_ERROR_INVALID_CONTEXT;
  hooks_.enter_device(g.device);
  t_current = green;
  return CUDA_SUCCESS;
}

}  // namespace rgpu::server
