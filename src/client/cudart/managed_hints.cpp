// Hints on managed memory. rgpu's managed memory is one set of pages both
// the host and every GPU reach in place (managed_memory.hpp), so nothing
// ever needs to move: advice and prefetches are checked and recorded (per
// allocation, for cudaMemRangeGetAttribute), discards leave the contents as
// they are (discarded contents are undefined), and attaching to a stream
// changes no visibility.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "client/core/api_guard.hpp"
#include "client/core/handles.hpp"
#include "client/core/per_thread_stream.hpp"
#include "client/core/runtime.hpp"
#include "client/cudart/managed_memory.hpp"

using namespace rgpu::client;

namespace {

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

bool known_stream(cudaStream_t stream) {
  stream = effective_stream(stream);
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
  RemoteObject o;
  return streams().find(stream, &o);
}

bool host_location(cudaMemLocationType t) {
  return t == cudaMemLocationTypeHost || t == cudaMemLocationTypeHostNuma || t == cudaMemLocationTypeHostNumaCurrent;
}

// A place memory may be asked to live: a GPU the application sees, or the host.
bool valid_location(const cudaMemLocation& l) {
  if (l.type == cudaMemLocationTypeDevice) return Runtime::get().device(l.id) != nullptr;
  return host_location(l.type);
}

// The runtime's int form of a location: a device, cudaCpuDeviceId, or
// cudaInvalidDeviceId when none was given.
int location_ordinal(const cudaMemLocation& l) {
  if (l.type == cudaMemLocationTypeDevice) return l.id;
  return host_location(l.type) ? cudaCpuDeviceId : cudaInvalidDeviceId;
}

cudaError_t prefetch(const void* ptr, size_t count, const cudaMemLocation& location) {
  if (!find_managed(addr(ptr), count) || count == 0) return cudaErrorInvalidValue;
  if (!valid_location(location)) return cudaErrorInvalidValue;
  update_managed(addr(ptr), [&](ManagedRange& r) { r.last_prefetch = location; });
  return cudaSuccess;
}

cudaError_t discard(void** ptrs, size_t* sizes, size_t count, cudaStream_t stream) {
  if (!ptrs || !sizes || count == 0) return cudaErrorInvalidValue;
  if (!known_stream(stream)) return cudaErrorInvalidResourceHandle;
  for (size_t i = 0; i < count; ++i)
    if (!find_managed(addr(ptrs[i]), sizes[i]) || sizes[i] == 0) return cudaErrorInvalidValue;
  return cudaSuccess;
}

// Prefetches ptrs[i] to the location whose range of indices holds i (the
// indices start at 0 and rise, as in cudaMemcpyBatchAsync).
cudaError_t prefetch_batch(void** ptrs, size_t* sizes, size_t count, cudaMemLocation* locations, size_t* idxs,
                           size_t num_locations, cudaStream_t stream) {
  if (!ptrs || !sizes || count == 0 || !locations || !idxs || num_locations == 0 || num_locations > count)
    return cudaErrorInvalidValue;
  if (!known_stream(stream)) return cudaErrorInvalidResourceHandle;
  for (size_t k = 0; k < num_locations; ++k)
    if (idxs[k] >= count || (k == 0 ? idxs[k] != 0 : idxs[k] <= idxs[k - 1])) return cudaErrorInvalidValue;
  for (size_t i = 0, k = 0; i < count; ++i) {
    while (k + 1 < num_locations && idxs[k + 1] <= i) ++k;
    if (cudaError_t e = prefetch(ptrs[i], sizes[i], locations[k])) return e;
  }
  return cudaSuccess;
}

cudaError_t put_int(void* data, size_t size, int value) {
  if (size != sizeof(int)) return cudaErrorInvalidValue;
  std::memcpy(data, &value, sizeof value);
  return cudaSuccess;
}

cudaError_t range_attribute(void* data, size_t size, cudaMemRangeAttribute attribute, const void* ptr, size_t count) {
  if (!data || count == 0) return cudaErrorInvalidValue;
  auto r = find_managed(addr(ptr), count);
  if (!r) return cudaErrorInvalidValue;
  switch (attribute) {
    case cudaMemRangeAttributeReadMostly: return put_int(data, size, r->read_mostly);
    case cudaMemRangeAttributePreferredLocation: return put_int(data, size, location_ordinal(r->preferred));
    case cudaMemRangeAttributePreferredLocationType: return put_int(data, size, r->preferred.type);
    case cudaMemRangeAttributePreferredLocationId: return put_int(data, size, r->preferred.id);
    case cudaMemRangeAttributeLastPrefetchLocation: return put_int(data, size, location_ordinal(r->last_prefetch));
    case cudaMemRangeAttributeLastPrefetchLocationType: return put_int(data, size, r->last_prefetch.type);
    case cudaMemRangeAttributeLastPrefetchLocationId: return put_int(data, size, r->last_prefetch.id);
    case cudaMemRangeAttributeAccessedBy: {
      if (size == 0 || size % sizeof(int)) return cudaErrorInvalidValue;
      auto* out = static_cast<int*>(data);
      size_t n = size / sizeof(int);
      std::fill(out, out + n, cudaInvalidDeviceId);
      size_t i = 0;
      for (int d : r->accessed_by)
        if (i < n) out[i++] = d;
      return cudaSuccess;
    }
  }
  return cudaErrorInvalidValue;
}

cudaError_t advise(const void* ptr, size_t count, cudaMemoryAdvise advice, const cudaMemLocation& location) {
  if (!find_managed(addr(ptr), count) || count == 0) return cudaErrorInvalidValue;
  bool needs_location = advice == cudaMemAdviseSetPreferredLocation || advice == cudaMemAdviseSetAccessedBy ||
                        advice == cudaMemAdviseUnsetAccessedBy;
  if (needs_location && !valid_location(location)) return cudaErrorInvalidValue;
  if (advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) return cudaErrorInvalidValue;
  update_managed(addr(ptr), [&](ManagedRange& r) {
    switch (advice) {
      case cudaMemAdviseSetReadMostly: r.read_mostly = true; break;
      case cudaMemAdviseUnsetReadMostly: r.read_mostly = false; break;
      case cudaMemAdviseSetPreferredLocation: r.preferred = location; break;
      case cudaMemAdviseUnsetPreferredLocation: r.preferred = {cudaMemLocationTypeInvalid, 0}; break;
      case cudaMemAdviseSetAccessedBy: r.accessed_by.insert(location_ordinal(location)); break;
      case cudaMemAdviseUnsetAccessedBy: r.accessed_by.erase(location_ordinal(location)); break;
    }
  });
  return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise advice,
                                     cudaMemLocation location) {
  return api([&] { return advise(devPtr, count, advice, location); });
}

extern "C" cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, cudaMemLocation location,
                                            unsigned int flags, cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (flags) return cudaErrorInvalidValue;
    if (!known_stream(stream)) return cudaErrorInvalidResourceHandle;
    return prefetch(devPtr, count, location);
  });
}

extern "C" cudaError_t cudaMemPrefetchBatchAsync(void** dptrs, size_t* sizes, size_t count,
                                                 cudaMemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                                 size_t numPrefetchLocs, unsigned long long flags,
                                                 cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (flags) return cudaErrorInvalidValue;
    return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, stream);
  });
}

extern "C" cudaError_t cudaMemDiscardBatchAsync(void** dptrs, size_t* sizes, size_t count, unsigned long long flags,
                                                cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (flags) return cudaErrorInvalidValue;
    return discard(dptrs, sizes, count, stream);
  });
}

extern "C" cudaError_t cudaMemDiscardAndPrefetchBatchAsync(void** dptrs, size_t* sizes, size_t count,
                                                           cudaMemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                                           size_t numPrefetchLocs, unsigned long long flags,
                                                           cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (flags) return cudaErrorInvalidValue;
    if (cudaError_t e = discard(dptrs, sizes, count, stream)) return e;
    return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, stream);
  });
}

extern "C" cudaError_t cudaMemRangeGetAttribute(void* data, size_t dataSize, cudaMemRangeAttribute attribute,
                                                const void* devPtr, size_t count) {
  return api([&] { return range_attribute(data, dataSize, attribute, devPtr, count); });
}

extern "C" cudaError_t cudaMemRangeGetAttributes(void** data, size_t* dataSizes, cudaMemRangeAttribute* attributes,
                                                 size_t numAttributes, const void* devPtr, size_t count) {
  return api([&]() -> cudaError_t {
    if (!data || !dataSizes || !attributes || numAttributes == 0) return cudaErrorInvalidValue;
    for (size_t i = 0; i < numAttributes; ++i)
      if (cudaError_t e = range_attribute(data[i], dataSizes[i], attributes[i], devPtr, count)) return e;
    return cudaSuccess;
  });
}

// Every GPU and the host see the whole allocation whatever it is attached to.
extern "C" cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length,
                                                unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
      return cudaErrorInvalidValue;
    if (!known_stream(stream)) return cudaErrorInvalidResourceHandle;
    auto r = find_managed(addr(devPtr));
    if (!r || r->base != addr(devPtr) || (length != 0 && length != r->size)) return cudaErrorInvalidValue;
    return cudaSuccess;
  });
}
