#include "client/move/session_move.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "client/core/call.hpp"
#include "client/core/context_constants.hpp"
#include "client/core/device_list.hpp"
#include "client/core/function_attribute_cache.hpp"
#include "client/core/given_variables.hpp"
#include "client/core/handles.hpp"
#include "client/core/heartbeat.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/module_registry.hpp"
#include "client/core/move_gate.hpp"
#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/cudart/event_reserve.hpp"
#include "client/cudart/staging_ring.hpp"
#include "client/graph/staging_blocks.hpp"
#include "client/move/content_copy.hpp"
#include "client/move/moved_event_times.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/generated/ops_generated.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

constexpr auto kBoundaryWait = std::chrono::seconds(10);

struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string cuda_error(cudaError_t e) { return std::string(cudaGetErrorName(e)); }

// HOST[:PORT][/GPU] as an RGPU_DEVICES entry; an entry passes as it is.
DeviceSpec parse_target(const std::string& text) {
  std::string entry = text;
  const size_t scheme = entry.find("://");
  const size_t slash = entry.rfind('/');
  if (slash != std::string::npos && (scheme == std::string::npos || slash > scheme + 2)) {
    std::string host = entry.substr(0, slash);
    const size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
    const std::string transport = scheme == std::string::npos ? transport_from_environment() : entry.substr(0, scheme);
    if (host.find(':', host_start) == std::string::npos) host += ":" + std::to_string(default_port(transport));
    entry = host + ":" + entry.substr(slash + 1);
  } else if (std::count(entry.begin() + (scheme == std::string::npos ? 0 : scheme + 3), entry.end(), ':') < 2) {
    throw Refusal("the target " + text + " names no port and GPU (HOST:PORT/GPU)");
  }
  try {
    auto specs = parse_device_list(entry, transport_from_environment());
    if (specs.size() != 1) throw std::invalid_argument("one GPU");
    return specs.front();
  } catch (const std::exception& e) {
    throw Refusal("bad target " + text + ": " + e.what());
  }
}

// Reopens the gate however the move ends.
struct GateGuard {
  ~GateGuard() { MoveGate::reopen(); }
};

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw Refusal(what + ": " + cuda_error(e));
}

using Allocation = MovedRange;

// The session's allocations, in address order, as its worker lists them
// (kOpMoveCheck); refused with the worker's reasons when it holds state
// that cannot move.
std::vector<Allocation> ask_worker(Session& from, int remote) {
  std::vector<uint8_t> reply;
  check(from.call(proto::kOpMoveCheck, static_cast<uint16_t>(remote), {}, {}, reply), "the worker's inventory");
  proto::Reader r(reply);
  uint32_t n = r.get<uint32_t>();
  std::string why;
  for (uint32_t i = 0; i < n; ++i) why += (why.empty() ? "" : "; ") + r.get_string();
  if (!why.empty()) throw Refusal(why);
  std::vector<Allocation> allocations(r.get<uint32_t>());
  for (auto& a : allocations) a = {r.get<uint64_t>(), r.get<uint64_t>()};
  return allocations;
}

void same_kind_of_gpu(Session& to, int gpu, const cudaDeviceProp& source) {
  cudaDeviceProp p;
  check(server_device_properties(to, gpu, &p), "the target's GPU");
  if (p.major != source.major || p.minor != source.minor)
    throw Refusal("the target's GPU (" + std::string(p.name) + ", sm_" + std::to_string(p.major * 10 + p.minor) +
                  ") is not the kind the session's kernels were loaded for (sm_" +
                  std::to_string(source.major * 10 + source.minor) + ")");
}

// The allocations made at their addresses on the target.
void make_memory(Session& to, int gpu, const std::vector<Allocation>& ranges) {
  if (ranges.empty()) return;
  proto::Writer w;
  w.put<uint32_t>(static_cast<uint32_t>(ranges.size()));
  for (const auto& r : ranges) w.put<uint64_t>(r.base).put<uint64_t>(r.size);
  std::vector<uint8_t> reply;
  char span[96];
  std::snprintf(span, sizeof span, " (%zu allocations in 0x%llx-0x%llx)", ranges.size(),
                static_cast<unsigned long long>(ranges.front().base),
                static_cast<unsigned long long>(ranges.back().base + ranges.back().size));
  check(to.call(proto::kOpMallocAt, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
        std::string("the target cannot make the session's memory at its addresses") + span);
}

// The allocations made early freed on the target again: the session's
// changed before its calls stopped.
void free_memory(Session& to, int gpu, const std::vector<Allocation>& ranges) {
  for (const auto& r : ranges) {
    proto::Writer w;
    w.put<uint64_t>(r.base);
    std::vector<uint8_t> reply;
    check(to.call(proto::kOpFree, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
          "freeing memory made early on the target");
  }
}

// Each of the device's streams and events made again on the target: old
// server handle -> new.
template <typename H>
std::map<uint64_t, uint64_t> remake(HandleRegistry<H>& table, int device, Session& to, int gpu, bool events) {
  std::map<uint64_t, uint64_t> fresh;
  for (const auto& entry : table.on_device(device)) {
    const RemoteObject& o = entry.second;
    proto::Writer w;
    if (events)
      w.put<uint32_t>(o.flags).put<uint32_t>(1);
    else
      w.put<uint32_t>(o.flags).put<int32_t>(o.priority);
    std::vector<uint8_t> reply;
    check(to.call(events ? proto::kOpEventCreate : proto::kOpStreamCreate, static_cast<uint16_t>(gpu), w.bytes(), {},
                  reply),
          events ? "making the session's events on the target" : "making the session's streams on the target");
    proto::Reader r(reply);
    if (events && r.get<uint32_t>() != 1) throw Refusal("the target made no event");
    fresh[o.remote] = r.get<uint64_t>();
  }
  return fresh;
}

using VarContents = std::vector<std::pair<VarEntry*, std::vector<uint8_t>>>;

// The device's module variables; refused for a managed one, whose memory
// the host reaches too.
std::vector<std::pair<VarEntry*, LoadedVar>> movable_vars(int device) {
  auto vars = ModuleRegistry::get().loaded_vars(device);
  for (const auto& [var, loaded] : vars)
    if (var->managed_pointer) throw Refusal("the session's modules hold managed variables (" + var->name + ")");
  return vars;
}

// The variables' contents as the application left them: loaded again on
// the target they would have their initial values.
VarContents read_vars(Session& from, int remote, const std::vector<std::pair<VarEntry*, LoadedVar>>& vars) {
  VarContents out;
  for (const auto& [var, loaded] : vars) {
    std::vector<uint8_t> bytes(loaded.size);
    if (loaded.size) read_device(from, remote, loaded.address, bytes.data(), loaded.size);
    out.emplace_back(var, std::move(bytes));
  }
  return out;
}

// An event made and recorded on `s`'s legacy stream, its work done (the
// device is idle during the pause): its server handle.
uint64_t record_now(Session& s, int gpu) {
  std::vector<uint8_t> reply;
  proto::Writer made;
  made.put<uint32_t>(cudaEventDefault).put<uint32_t>(1);
  check(s.call(proto::kOpEventCreate, static_cast<uint16_t>(gpu), made.bytes(), {}, reply), "making an event to time the move");
  proto::Reader r(reply);
  if (r.get<uint32_t>() != 1) throw Refusal("no event to time the move");
  const uint64_t event = r.get<uint64_t>();
  proto::Writer at;
  at.put<uint64_t>(event).put<uint64_t>(0);
  check(s.call(proto::kOpEventRecord, static_cast<uint16_t>(gpu), at.bytes(), {}, reply), "timing the move");
  proto::Writer sync;
  sync.put<uint64_t>(event);
  check(s.call(proto::kOpEventSynchronize, static_cast<uint16_t>(gpu), sync.bytes(), {}, reply), "timing the move");
  return event;
}

std::optional<float> elapsed(Session& s, int gpu, uint64_t from, uint64_t to) {
  proto::Writer w;
  w.put<uint64_t>(from).put<uint64_t>(to);
  std::vector<uint8_t> reply;
  if (s.call(proto::kOpEventElapsedTime, static_cast<uint16_t>(gpu), w.bytes(), {}, reply, false) != cudaSuccess)
    return std::nullopt;
  return proto::Reader(reply).get<float>();
}

void destroy_event(Session& s, int gpu, uint64_t event) {
  proto::Writer w;
  w.put<uint64_t>(event);
  std::vector<uint8_t> reply;
  s.call(proto::kOpEventDestroy, static_cast<uint16_t>(gpu), w.bytes(), {}, reply, false);
}

// How long before the move point (an event recorded on the old server now)
// each timed event of the device happened: from the server's clock, or for
// a time an earlier move left, from that move's anchor. Events never
// recorded have none.
std::map<cudaEvent_t, float> times_before(Session& from, int remote, int device, uint64_t point) {
  const MovedEventTimes& moved = MovedEventTimes::get();
  std::optional<float> anchor_before;  // the last move's anchor, before the point
  if (auto anchor = moved.anchor(device)) {
    RemoteObject a;
    if (events().find(*anchor, &a)) anchor_before = elapsed(from, remote, a.remote, point);
  }
  std::map<cudaEvent_t, float> out;
  for (const auto& [handle, o] : events().on_device(device)) {
    if (o.flags & cudaEventDisableTiming) continue;
    if (auto earlier = moved.before_anchor(handle)) {
      if (anchor_before) out[handle] = *earlier + *anchor_before;
    } else if (auto ms = elapsed(from, remote, o.remote, point)) {
      out[handle] = *ms;
    }
  }
  return out;
}

// After the commit: an anchor recorded on the target, and each event's time
// counted from it, the pause between the two reckoned by this process.
// Nothing after the commit may refuse: without an anchor the times are lost,
// and elapsed times with those events fail as for events never recorded.
void anchor_event_times(Session& to, int gpu, int device, std::map<cudaEvent_t, float> times,
                        std::chrono::steady_clock::time_point point_at) {
  uint64_t remote = 0;
  try {
    remote = record_now(to, gpu);
  } catch (const std::exception& e) {
    RGPU_LOG(error, "moved session: the times of events recorded before the move are lost (%s)", e.what());
    MovedEventTimes::get().moved(device, nullptr, {});
    return;
  }
  const float gap = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - point_at).count();
  for (auto& [event, ms] : times) ms += gap;
  const auto old = MovedEventTimes::get().anchor(device);
  MovedEventTimes::get().moved(device, events().add(device, remote, cudaEventDefault), std::move(times));
  RemoteObject o;
  if (old && events().find(*old, &o)) {
    destroy_event(to, gpu, o.remote);
    events().remove(*old);
  }
}

struct GivenContents {
  GivenVariable var;
  std::vector<uint8_t> bytes;
};

// The variables whose address the application holds, with their contents
// where they lie now (an earlier move's target, for one moved before).
std::vector<GivenContents> read_given(Session& from, int remote, int device) {
  std::vector<GivenContents> out;
  for (GivenVariable& g : GivenVariables::get().on_device(device)) {
    std::vector<uint8_t> bytes(g.size);
    const uint64_t at = MemoryMap::get().device_side(g.address).value_or(g.address);
    if (g.size) read_device(from, remote, at, bytes.data(), g.size);
    out.push_back({std::move(g), std::move(bytes)});
  }
  return out;
}

// After the commit: each variable found again where its module loads on the
// target, its contents written there, and the application's address made to
// stand for it there.
void keep_given(const std::vector<GivenContents>& given, Session& to, int gpu) {
  for (const GivenContents& g : given) {
    uint64_t now = 0;
    std::string failed;
    if (cudaError_t e = g.var.find_again(&now)) {
      failed = cuda_error(e);
    } else {
      try {
        if (!g.bytes.empty()) write_device(to, gpu, now, g.bytes.data(), g.bytes.size());
      } catch (const std::exception& e) {
        failed = e.what();
      }
      if (failed.empty() && now != g.var.address &&
          !MemoryMap::get().add_moved_variable(g.var.address, g.var.size, g.var.device, now))
        failed = "its address names other memory of the application";
    }
    if (!failed.empty())
      RGPU_LOG(error, "moved session: the module variable at 0x%llx, whose address the application holds, is lost (%s)",
               static_cast<unsigned long long>(g.var.address), failed.c_str());
  }
}

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
  check(to.call(set, static_cast<uint16_t>(gpu), args, {}, reply), "the target does not take the session's " + what);
}

// The context's limits and cache preference.
void carry_context_settings(Session& from, int remote, Session& to, int gpu) {
  constexpr cudaLimit kLimits[] = {cudaLimitStackSize, cudaLimitPrintfFifoSize, cudaLimitMallocHeapSize,
                                   cudaLimitDevRuntimeSyncDepth, cudaLimitDevRuntimePendingLaunchCount,
                                   cudaLimitMaxL2FetchGranularity, cudaLimitPersistingL2CacheSize};
  for (cudaLimit limit : kLimits) {
    proto::Writer key;
    key.put(limit);
    carry_setting(from, remote, to, gpu, proto::kOp_cudaDeviceGetLimit, proto::kOp_cudaDeviceSetLimit, key.bytes(),
                  "limit " + std::to_string(limit));
  }
  carry_setting(from, remote, to, gpu, proto::kOp_cudaDeviceGetCacheConfig, proto::kOp_cudaDeviceSetCacheConfig, {},
                "cache preference");
}

std::optional<uint64_t> default_pool(Session& s, int gpu) {
  proto::Writer w;
  w.put<int32_t>(gpu);
  std::vector<uint8_t> reply;
  if (s.call(proto::kOpDeviceGetDefaultMemPool, static_cast<uint16_t>(gpu), w.bytes(), {}, reply, false) != cudaSuccess)
    return std::nullopt;
  return proto::Reader(reply).get<uint64_t>();
}

// The GPU's default memory pool, where the application named it
// (cudaDeviceGetDefaultMemPool): the target's stands in for the source's,
// with the reuse policies and release threshold the application gave it.
// Old handle -> new, for the client's records.
std::map<uint64_t, uint64_t> carry_default_pool(Session& from, int remote, Session& to, int gpu, int device) {
  const auto source = default_pool(from, remote);
  const auto named = mem_pools().on_device(device);
  if (!source || std::none_of(named.begin(), named.end(), [&](const auto& p) { return p.second.remote == *source; }))
    return {};
  const auto target = default_pool(to, gpu);
  if (!target) throw Refusal("the target's GPU has no default memory pool");
  for (cudaMemPoolAttr attr : {cudaMemPoolReuseFollowEventDependencies, cudaMemPoolReuseAllowOpportunistic,
                               cudaMemPoolReuseAllowInternalDependencies, cudaMemPoolAttrReleaseThreshold}) {
    proto::Writer key, target_key;
    key.put<uint64_t>(*source).put<int32_t>(attr);
    target_key.put<uint64_t>(*target).put<int32_t>(attr);
    carry_setting(from, remote, to, gpu, proto::kOpMemPoolGetAttribute, proto::kOpMemPoolSetAttribute, key.bytes(),
                  "default memory pool's attribute " + std::to_string(attr), target_key.bytes());
  }
  return {{*source, *target}};
}

// Page-locked memory shared with the worker over shm, and which memory
// file it is (a freed range's address and descriptor number may come back
// with another file).
struct SharedRange {
  uint64_t base;
  size_t size;
  int fd;
  ino_t file;
  bool operator==(const SharedRange&) const = default;
};

std::vector<SharedRange> shared_page_locked() {
  std::vector<SharedRange> out;
  for (const HostRange& r : MemoryMap::get().page_locked_ranges()) {
    struct stat st {};
    if (r.shared_fd >= 0 && fstat(r.shared_fd, &st) == 0) out.push_back({r.base, r.size, r.shared_fd, st.st_ino});
  }
  return out;
}

// The page-locked memory shared with the old worker (shm) shared with the
// new, where the GPU must reach it at the application's own address as it
// did (the old worker's check lets only such mapped memory move). `before`:
// what an earlier call shared; what was freed since is let go there. What
// is shared now.
std::vector<SharedRange> share_page_locked(Session& to, int gpu, const std::vector<SharedRange>& before) {
  if (!to.shares_memory()) return {};
  const std::vector<SharedRange> now = shared_page_locked();
  std::vector<uint8_t> reply;
  for (const SharedRange& r : before) {
    if (std::find(now.begin(), now.end(), r) != now.end()) continue;
    proto::Writer w;
    w.put<uint64_t>(r.base);
    check(to.call(proto::kOpHostUnregisterShared, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
          "letting go of freed page-locked memory on the target");
  }
  for (const SharedRange& r : now) {
    if (std::find(before.begin(), before.end(), r) != before.end()) continue;
    proto::Writer w;
    w.put<uint64_t>(r.base).put<uint64_t>(r.size);
    check(to.call_with_fd(proto::kOpHostRegisterShared, static_cast<uint16_t>(gpu), w.bytes(), r.fd, reply),
          "sharing page-locked memory with the target");
    proto::Writer at;
    at.put<uint64_t>(r.base);
    check(to.call(proto::kOpHostGetDevicePointer, static_cast<uint16_t>(gpu), at.bytes(), {}, reply),
          "the target's address for page-locked memory");
    if (proto::Reader(reply).get<uint64_t>() != r.base) {
      char text[96];
      std::snprintf(text, sizeof text, "the target cannot map page-locked memory at 0x%llx, its address here",
                    static_cast<unsigned long long>(r.base));
      throw Refusal(text);
    }
  }
  return now;
}

// What the client keeps of the device's old server: dropped, to be made
// again at next use, or rewritten to the target's handles; the module
// variables' contents wait for their modules' next load.
void forget_old_server(int device, const std::vector<Allocation>& allocations,
                       const std::map<uint64_t, uint64_t>& streams_now, const std::map<uint64_t, uint64_t>& events_now,
                       VarContents vars) {
  // The device's other ranges are its modules' variables, which load again
  // elsewhere, and its page-locked memory's device addresses, which
  // share_page_locked kept. Both lists are in address order.
  const auto page_locked = MemoryMap::get().page_locked_ranges();
  const auto kept_mapped = [&](const DeviceRange& r) {
    return std::any_of(page_locked.begin(), page_locked.end(), [&](const HostRange& h) {
      return h.shared_fd >= 0 && r.base < h.base + h.size && h.base < r.base + r.size;
    });
  };
  for (const DeviceRange& r : MemoryMap::get().device_ranges(device))
    if (!std::binary_search(allocations.begin(), allocations.end(), Allocation{r.base, 0},
                            [](const Allocation& a, const Allocation& b) { return a.base < b.base; }) &&
        !kept_mapped(r))
      MemoryMap::get().remove_device(r.base);
  streams().rewrite(device, streams_now);
  events().rewrite(device, events_now);
  ModuleRegistry::get().moved_device(device, std::move(vars));
  DriverHandles::get().reload_on_next_use(device);
  FunctionAttributeCache::get().forget_device(device);
  ContextConstants::get().forget_device(device);
  EventReserve::get().forget_device(device);
  forget_staging_rings(device);
  graph_staging(device).forget();
}

std::string move_asked_by_scheduler(Session& from, const std::string& target) {
  MoveGate::mark_mover_thread();
  return move_session(from, target).refused;
}

// `rgpu migrate` reaches the client through its session's heartbeats.
const bool kMovesTaken = (set_move_runner(&move_asked_by_scheduler), true);

}  // namespace

MoveOutcome move_session(Session& from, const std::string& target) {
  MoveOutcome outcome;
  Runtime& rt = Runtime::get();
  std::unique_ptr<Session> to;
  try {
    DeviceSpec spec = parse_target(target);
    int device = -1;
    for (int i = 0; i < rt.device_count(); ++i)
      if (rt.device(i)->session == &from) {
        if (device >= 0) throw Refusal("the session serves more than one GPU; moving them one by one is not built");
        device = i;
      }
    if (device < 0) throw Refusal("the session serves no GPU of this application");
    const int remote = rt.device(device)->remote;
    const cudaDeviceProp* source_props = nullptr;
    check(rt.properties(device, &source_props), "the source GPU's properties");

    std::string why;
    to = Session::open(spec.server, spec.transport, {spec.gpu}, &why);
    if (!to) throw Refusal(why);
    same_kind_of_gpu(*to, spec.gpu, *source_props);

    // Made ready while the application runs: what cannot move refuses
    // before any pause; the target's memory at the session's addresses,
    // the movers and the shared page-locked memory wait for the pause.
    auto allocations = ask_worker(from, remote);
    make_memory(*to, spec.gpu, allocations);
    ContentMovers movers(from, remote, *to, spec.gpu, allocations);
    auto page_locked = share_page_locked(*to, spec.gpu, {});
    movers.wait_ready();

    const auto asked = std::chrono::steady_clock::now();
    if (!MoveGate::stop_calls(kBoundaryWait))
      throw Refusal("the application's threads did not reach a call boundary within 10 s");
    GateGuard reopen;
    const auto stopped = std::chrono::steady_clock::now();
    std::vector<uint8_t> reply;
    check(from.call(proto::kOpDeviceSynchronize, static_cast<uint16_t>(remote), {}, {}, reply),
          "the session's work failed before the move");
    from.finish_background_copies();
    if (!MoveGate::stop_callbacks(kBoundaryWait))
      throw Refusal("a host callback did not return within 10 s");
    const uint64_t point = record_now(from, remote);
    const auto point_at = std::chrono::steady_clock::now();
    auto event_times = times_before(from, remote, device, point);
    destroy_event(from, remote, point);
    const auto synchronized = std::chrono::steady_clock::now();
    if (auto held = ask_worker(from, remote); held != allocations) {
      RGPU_LOG(info, "the session's memory changed while the move got ready: made again on the target");
      free_memory(*to, spec.gpu, allocations);
      allocations = std::move(held);
      make_memory(*to, spec.gpu, allocations);
    }
    const auto loaded_vars = movable_vars(device);
    const auto made = std::chrono::steady_clock::now();
    // The variables are read beside the copy, on a connection of their own.
    auto vars_read = std::async(std::launch::async, [&] {
      return std::make_pair(read_vars(from, remote, loaded_vars), read_given(from, remote, device));
    });
    outcome.bytes = movers.copy(allocations);
    auto [vars, given] = vars_read.get();
    const auto copied = std::chrono::steady_clock::now();
    auto streams_now = remake(streams(), device, *to, spec.gpu, false);
    auto events_now = remake(events(), device, *to, spec.gpu, true);
    auto pools_now = carry_default_pool(from, remote, *to, spec.gpu, device);
    share_page_locked(*to, spec.gpu, page_locked);
    carry_context_settings(from, remote, *to, spec.gpu);
    const auto remade = std::chrono::steady_clock::now();

    // Committed: from here the session is the target's.
    Session& target_session = *to;
    mem_pools().rewrite(device, pools_now);
    forget_old_server(device, allocations, streams_now, events_now, std::move(vars));
    rt.replace_session(&from, std::move(to), spec.gpu);
    keep_given(given, target_session, spec.gpu);
    anchor_event_times(target_session, spec.gpu, device, std::move(event_times), point_at);
    const auto done = std::chrono::steady_clock::now();
    const auto ms = [](auto from, auto to) { return std::chrono::duration<double, std::milli>(to - from).count(); };
    outcome.pause_ms = ms(asked, done);
    RGPU_LOG(info,
             "session moved to %s: %.1f MB of device memory, paused %.1f ms (%.1f ms until the calls stopped, %.1f ms "
             "until the GPU's work was done, %.1f ms checking memory, %.1f ms copying it, %.1f ms remaking streams, "
             "events, page-locked memory and settings, %.1f ms switching; %zu module variables carried)",
             target.c_str(), outcome.bytes / 1e6, outcome.pause_ms, ms(asked, stopped), ms(stopped, synchronized),
             ms(synchronized, made), ms(made, copied), ms(copied, remade), ms(remade, done), loaded_vars.size());
  } catch (const std::exception& e) {
    outcome.refused = e.what();
    RGPU_LOG(warn, "the session stays where it is: %s", e.what());
  }
  return outcome;
}

}  // namespace rgpu::client
