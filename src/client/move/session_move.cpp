#include "client/move/session_move.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "client/core/context_constants.hpp"
#include "client/core/device_list.hpp"
#include "client/core/function_attribute_cache.hpp"
#include "client/core/handles.hpp"
#include "client/core/heartbeat.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/module_registry.hpp"
#include "client/core/move_gate.hpp"
#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/cuda/vmm_handles.hpp"
#include "client/cudart/event_reserve.hpp"
#include "client/cudart/staging_ring.hpp"
#include "client/graph/staging_blocks.hpp"
#include "client/move/content_copy.hpp"
#include "client/move/context_settings.hpp"
#include "client/move/graph_rebuild.hpp"
#include "client/move/module_preload.hpp"
#include "client/move/module_variables.hpp"
#include "client/move/move_refusal.hpp"
#include "client/move/moved_event_times.hpp"
#include "client/move/page_locked_share.hpp"
#include "client/move/target_objects.hpp"
#include "client/move/virtual_memory_carry.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

constexpr auto kBoundaryWait = std::chrono::seconds(10);

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
    throw MoveRefusal("the target " + text + " names no port and GPU (HOST:PORT/GPU)");
  }
  try {
    auto specs = parse_device_list(entry, transport_from_environment());
    if (specs.size() != 1) throw std::invalid_argument("one GPU");
    return specs.front();
  } catch (const std::exception& e) {
    throw MoveRefusal("bad target " + text + ": " + e.what());
  }
}

// Reopens the gate however the move ends.
struct GateGuard {
  ~GateGuard() { MoveGate::reopen(); }
};

using Allocation = MovedRange;

// The session's allocations, in address order, as its worker lists them
// (kOpMoveCheck); refused with the worker's reasons when it holds state
// that cannot move.
std::vector<Allocation> ask_worker(Session& from, int remote) {
  std::vector<uint8_t> reply;
  check_step(from.call(proto::kOpMoveCheck, static_cast<uint16_t>(remote), {}, {}, reply), "the worker's inventory");
  proto::Reader r(reply);
  refuse_for_reasons(r);
  std::vector<Allocation> allocations(r.get<uint32_t>());
  for (auto& a : allocations) a = {r.get<uint64_t>(), r.get<uint64_t>()};
  return allocations;
}

void same_kind_of_gpu(Session& to, int gpu, const cudaDeviceProp& source) {
  cudaDeviceProp p;
  check_step(server_device_properties(to, gpu, &p), "the target's GPU");
  if (p.major != source.major || p.minor != source.minor)
    throw MoveRefusal("the target's GPU (" + std::string(p.name) + ", sm_" + std::to_string(p.major * 10 + p.minor) +
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
  check_step(to.call(proto::kOpMallocAt, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
             std::string("the target cannot make the session's memory at its addresses") + span);
}

// The allocations made early freed on the target again: the session's
// changed before its calls stopped.
void free_memory(Session& to, int gpu, const std::vector<Allocation>& ranges) {
  for (const auto& r : ranges) {
    proto::Writer w;
    w.put<uint64_t>(r.base);
    std::vector<uint8_t> reply;
    check_step(to.call(proto::kOpFree, static_cast<uint16_t>(gpu), w.bytes(), {}, reply),
               "freeing memory made early on the target");
  }
}

// A stream or event made on the target, and what it was made with.
struct Remade {
  uint64_t target;
  uint32_t flags;
  int32_t priority;
};
using RemadeObjects = std::map<uint64_t, Remade>;  // by the source's handle

// Each of the device's streams or events made again on the target. `early`:
// those made before the pause; one the application still has (the same
// handle, made with the same flags and priority) is kept, the others are
// destroyed there.
template <typename H>
RemadeObjects remake(HandleRegistry<H>& table, int device, Session& to, int gpu, ObjectKind kind,
                     RemadeObjects early = {}) {
  RemadeObjects out;
  const std::string what = kind == ObjectKind::event ? "making the session's events on the target"
                                                     : "making the session's streams on the target";
  for (const auto& entry : table.on_device(device)) {
    const RemoteObject& o = entry.second;
    if (auto it = early.find(o.remote);
        it != early.end() && it->second.flags == o.flags && it->second.priority == o.priority) {
      out[o.remote] = it->second;
      early.erase(it);
      continue;
    }
    out[o.remote] = {make_object(to, gpu, kind, o.flags, o.priority, what), o.flags, o.priority};
  }
  for (const auto& [source, made] : early) destroy_object(to, gpu, kind, made.target);
  return out;
}

// Source handle -> target handle, for the client's records.
std::map<uint64_t, uint64_t> targets(const RemadeObjects& remade) {
  std::map<uint64_t, uint64_t> out;
  for (const auto& [source, made] : remade) out[source] = made.target;
  return out;
}

// What the client keeps of the device's old server: dropped, to be made
// again at next use, or rewritten to the target's handles; the module
// variables' contents wait for their modules' next load. `kept`: the memory
// made again at its addresses (allocations, virtual memory), in address order.
void forget_old_server(int device, const std::vector<Allocation>& kept,
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
    if (!std::binary_search(kept.begin(), kept.end(), Allocation{r.base, 0},
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
        if (device >= 0) throw MoveRefusal("the session serves more than one GPU; moving them one by one is not built");
        device = i;
      }
    if (device < 0) throw MoveRefusal("the session serves no GPU of this application");
    const int remote = rt.device(device)->remote;
    const cudaDeviceProp* source_props = nullptr;
    check_step(rt.properties(device, &source_props), "the source GPU's properties");

    std::string why;
    to = Session::open(spec.server, spec.transport, {spec.gpu}, &why);
    if (!to) throw MoveRefusal(why);
    same_kind_of_gpu(*to, spec.gpu, *source_props);

    // Made ready while the application runs: what cannot move refuses
    // before any pause; the target's memory at the session's addresses,
    // the movers and the shared page-locked memory wait for the pause.
    auto allocations = ask_worker(from, remote);
    make_memory(*to, spec.gpu, allocations);
    ContentMovers movers(from, remote, *to, spec.gpu, allocations);
    auto page_locked = share_page_locked(*to, spec.gpu, {});
    const PreloadOutcome preloaded = preload_modules(*to, spec.gpu, device);
    RGPU_LOG(info, "moving session: %zu modules loaded on the target ahead (%.1f MB of images sent), %.1f ms",
             preloaded.modules, preloaded.bytes_sent / 1e6, preloaded.ms);
    auto streams_early = remake(streams(), device, *to, spec.gpu, ObjectKind::stream);
    auto events_early = remake(events(), device, *to, spec.gpu, ObjectKind::event);
    movers.wait_ready();

    const auto asked = std::chrono::steady_clock::now();
    if (!MoveGate::stop_calls(kBoundaryWait))
      throw MoveRefusal("the application's threads did not reach a call boundary within 10 s");
    GateGuard reopen;
    const auto stopped = std::chrono::steady_clock::now();
    std::vector<uint8_t> reply;
    check_step(from.call(proto::kOpDeviceSynchronize, static_cast<uint16_t>(remote), {}, {}, reply),
               "the session's work failed before the move");
    from.finish_background_copies();
    if (!MoveGate::stop_callbacks(kBoundaryWait)) throw MoveRefusal("a host callback did not return within 10 s");
    MovePoint point = measure_event_times(from, remote, device);
    const auto synchronized = std::chrono::steady_clock::now();
    if (auto held = ask_worker(from, remote); held != allocations) {
      RGPU_LOG(info, "the session's memory changed while the move got ready: made again on the target");
      free_memory(*to, spec.gpu, allocations);
      allocations = std::move(held);
      make_memory(*to, spec.gpu, allocations);
    }
    const CarriedVirtualMemory virtual_memory = carry_virtual_memory(*to, spec.gpu, device);
    std::vector<Allocation> contents = allocations;
    for (const auto& [base, size] : virtual_memory.contents) contents.push_back({base, size});
    std::sort(contents.begin(), contents.end(), [](const Allocation& a, const Allocation& b) { return a.base < b.base; });
    const auto loaded_vars = movable_vars(device);
    const auto made = std::chrono::steady_clock::now();
    // The variables are read beside the copy, on a connection of their own.
    auto vars_read = std::async(std::launch::async, [&] {
      return std::make_pair(read_vars(from, remote, loaded_vars), read_given(from, remote, device));
    });
    outcome.bytes = movers.copy(contents);
    auto [vars, given] = vars_read.get();
    const auto copied = std::chrono::steady_clock::now();
    const auto streams_now =
        targets(remake(streams(), device, *to, spec.gpu, ObjectKind::stream, std::move(streams_early)));
    const auto events_now =
        targets(remake(events(), device, *to, spec.gpu, ObjectKind::event, std::move(events_early)));
    auto pools_now = carry_pools(from, remote, *to, spec.gpu, device);
    auto graphs = read_graphs(from, remote, device, events_now, loaded_vars);
    share_page_locked(*to, spec.gpu, page_locked);
    carry_context_settings(from, remote, *to, spec.gpu);
    const auto remade = std::chrono::steady_clock::now();

    // Committed: from here the session is the target's.
    Session& target_session = *to;
    mem_pools().rewrite(device, pools_now);
    forget_old_server(device, contents, streams_now, events_now, std::move(vars));
    virtual_memory_moved(device, virtual_memory.allocations);
    rt.replace_session(&from, std::move(to), spec.gpu);
    keep_given(given, target_session, spec.gpu);
    anchor_event_times(target_session, spec.gpu, device, std::move(point));
    const auto switched = std::chrono::steady_clock::now();
    build_graphs(std::move(graphs), target_session, spec.gpu, device);
    const auto done = std::chrono::steady_clock::now();
    const auto ms = [](auto from, auto to) { return std::chrono::duration<double, std::milli>(to - from).count(); };
    outcome.pause_ms = ms(asked, done);
    RGPU_LOG(info,
             "session moved to %s: %.1f MB of device memory, paused %.1f ms (%.1f ms until the calls stopped, %.1f ms "
             "until the GPU's work was done, %.1f ms checking memory, %.1f ms copying it, %.1f ms remaking streams, "
             "events, page-locked memory and settings, %.1f ms switching, %.1f ms making graphs again; %zu module variables "
             "carried)",
             target.c_str(), outcome.bytes / 1e6, outcome.pause_ms, ms(asked, stopped), ms(stopped, synchronized),
             ms(synchronized, made), ms(made, copied), ms(copied, remade), ms(remade, switched), ms(switched, done),
             loaded_vars.size());
  } catch (const std::exception& e) {
    outcome.refused = e.what();
    RGPU_LOG(warn, "the session stays where it is: %s", e.what());
  }
  return outcome;
}

}  // namespace rgpu::client
