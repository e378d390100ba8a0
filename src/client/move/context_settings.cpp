#include "client/move/context_settings.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/core/handles.hpp"
#include "client/core/session.hpp"
#include "client/cudart/made_pools.hpp"
#include "client/move/move_refusal.hpp"
#include "protocol/codec.hpp"
#include "protocol/generated/ops_generated.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

// A context setting's value as `s`'s server answers its get call (`key`
// names which, a limit); nullopt where it has none to give.
std::optional<std::vector<uint8_t>> read_setting(Session& s, int gpu, uint16_t get, std::span<const uint8_t> key) {
  std::vector<uint8_t> value;
  if (s.call(get, static_cast<uint16_t>(gpu), key, {}, value, false) != cudaSuccess) return std::nullopt;
  return value;
}

// A setting as the application left it on the source, set on the target
// where the target's differs: the set call takes the key, then the value as
// the get call answered it. `target_key` names it on the target where its
// object has another handle there.
void carry_setting(Session& from, int remote, Session& to, int gpu, uint16_t get, uint16_t set,
                   std::span<const uint8_t> key, const std::string& what,
                   std::optional<std::span<const uint8_t>> target_key = std::nullopt) {
  const std::span<const uint8_t> there = target_key.value_or(key);
  auto was = read_setting(from, remote, get, key);
  if (!was || read_setting(to, gpu, get, there) == was) return;
  std::vector<uint8_t> args(there.begin(), there.end());
  args.insert(args.end(), was->begin(), was->end());
  std::vector<uint8_t> reply;
  check_step(to.call(set, static_cast<uint16_t>(gpu), args, {}, reply),
             "the target does not take the session's " + what);
}

// The GPU's default (`op` kOpDeviceGetDefaultMemPool) or current
// (kOpDeviceGetMemPool) memory pool on `s`'s server.
std::optional<uint64_t> device_pool(Session& s, int gpu, uint16_t op) {
  proto::Writer w;
  w.put<int32_t>(gpu);
  std::vector<uint8_t> reply;
  if (s.call(op, static_cast<uint16_t>(gpu), w.bytes(), {}, reply, false) != cudaSuccess) return std::nullopt;
  return proto::Reader(reply).get<uint64_t>();
}

// A pool's reuse policies and release threshold, as the application set them.
void carry_pool_attributes(Session& from, int remote, Session& to, int gpu, uint64_t source, uint64_t target) {
  for (cudaMemPoolAttr attr : {cudaMemPoolReuseFollowEventDependencies, cudaMemPoolReuseAllowOpportunistic,
                               cudaMemPoolReuseAllowInternalDependencies, cudaMemPoolAttrReleaseThreshold}) {
    proto::Writer key, target_key;
    key.put<uint64_t>(source).put<int32_t>(attr);
    target_key.put<uint64_t>(target).put<int32_t>(attr);
    carry_setting(from, remote, to, gpu, proto::kOpMemPoolGetAttribute, proto::kOpMemPoolSetAttribute, key.bytes(),
                  "memory pool attribute " + std::to_string(attr), target_key.bytes());
  }
}

// A pool the application made, made again on the target with its properties.
uint64_t make_pool(Session& to, int gpu, cudaMemPoolProps props) {
  props.location.id = gpu;
  proto::Writer w;
  w.put(props);
  std::vector<uint8_t> reply;
  check_step(to.call(proto::kOpMemPoolCreate, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
             "making the session's memory pool on the target");
  return proto::Reader(reply).get<uint64_t>();
}

}  // namespace

void carry_context_settings(Session& from, int remote, Session& to, int gpu) {
  constexpr cudaLimit kLimits[] = {cudaLimitStackSize,
                                   cudaLimitPrintfFifoSize,
                                   cudaLimitMallocHeapSize,
                                   cudaLimitDevRuntimeSyncDepth,
                                   cudaLimitDevRuntimePendingLaunchCount,
                                   cudaLimitMaxL2FetchGranularity,
                                   cudaLimitPersistingL2CacheSize};
  for (cudaLimit limit : kLimits) {
    proto::Writer key;
    key.put(limit);
    carry_setting(from, remote, to, gpu, proto::kOp_cudaDeviceGetLimit, proto::kOp_cudaDeviceSetLimit, key.bytes(),
                  "limit " + std::to_string(limit));
  }
  carry_setting(from, remote, to, gpu, proto::kOp_cudaDeviceGetCacheConfig, proto::kOp_cudaDeviceSetCacheConfig, {},
                "cache preference");
}

std::map<uint64_t, uint64_t> carry_pools(Session& from, int remote, Session& to, int gpu, int device) {
  std::map<uint64_t, uint64_t> fresh;
  const auto source_default = device_pool(from, remote, proto::kOpDeviceGetDefaultMemPool);
  for (const auto& [handle, o] : mem_pools().on_device(device)) {
    uint64_t target = 0;
    if (o.remote == source_default) {
      const auto target_default = device_pool(to, gpu, proto::kOpDeviceGetDefaultMemPool);
      if (!target_default) throw MoveRefusal("the target's GPU has no default memory pool");
      target = *target_default;
    } else if (auto props = made_pools::props(handle)) {
      target = make_pool(to, gpu, *props);
    } else {
      throw MoveRefusal("the session uses a memory pool it did not make (imported from another process)");
    }
    carry_pool_attributes(from, remote, to, gpu, o.remote, target);
    fresh[o.remote] = target;
  }
  // The GPU's current pool, where the application made it one of its own.
  const auto current = device_pool(from, remote, proto::kOpDeviceGetMemPool);
  if (current && current != source_default && fresh.contains(*current)) {
    proto::Writer w;
    w.put<int32_t>(gpu).put<uint64_t>(fresh[*current]);
    std::vector<uint8_t> reply;
    check_step(to.call(proto::kOpDeviceSetMemPool, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
               "making the session's pool the target GPU's current one");
  }
  return fresh;
}

}  // namespace rgpu::client
