// CUDA IPC between application processes using GPUs of one server. The
// handle holds the server's identity and a token naming what was exported
// (the server's workers share the exported objects, see the server's
// ipc_records.hpp); opening a handle of another server, or of nothing,
// fails with cudaErrorInvalidResourceHandle. Handles are opened on the
// current device's server.
#include <cuda_runtime_api.h>

#include <array>
#include <cstring>
#include <mutex>
#include <set>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/handles.hpp"
#include "client/core/memory_map.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

constexpr char kMemoryMagic[8] = {'R', 'G', 'P', 'U', '-', 'M', 'E', 'M'};
constexpr char kEventMagic[8] = {'R', 'G', 'P', 'U', '-', 'E', 'V', 'T'};
using Token = std::array<uint8_t, 16>;

// Layout in the handle's 64 bytes: magic, server identity, token.
void pack(char* out, const char* magic, proto::Reader& reply) {
  std::memset(out, 0, 64);
  std::memcpy(out, magic, 8);
  auto server = reply.get<uint64_t>();
  auto token = reply.get<Token>();
  std::memcpy(out + 8, &server, 8);
  std::memcpy(out + 16, token.data(), token.size());
}

bool unpack(const char* in, const char* magic, proto::Writer& args) {
  if (std::memcmp(in, magic, 8) != 0) return false;
  uint64_t server;
  Token token;
  std::memcpy(&server, in + 8, 8);
  std::memcpy(token.data(), in + 16, token.size());
  args.put<uint64_t>(server).put(token);
  return true;
}

// Addresses of opened memory handles.
struct Opened {
  std::mutex mutex;
  std::set<uint64_t> bases;
};

Opened& opened() {
  static auto* o = new Opened;
  return *o;
}

cudaError_t open_memory(void** ptr, const cudaIpcMemHandle_t& handle, unsigned flags) {
  if (!ptr) return cudaErrorInvalidValue;
  Call call(proto::kOpIpcOpenMemHandle);
  if (cudaError_t e = call.to_current_device()) return e;
  if (!unpack(handle.reserved, kMemoryMagic, call.args())) return cudaErrorInvalidResourceHandle;
  call.args().put<uint32_t>(flags);
  if (cudaError_t e = call.run()) return e;
  uint64_t base = call.reply().get<uint64_t>();
  uint64_t size = call.reply().get<uint64_t>();
  if (!MemoryMap::get().add_device(base, size, call.device_index())) {
    Call undo(proto::kOpIpcCloseMemHandle);
    int32_t remote;
    if (undo.to_device(call.device_index(), &remote) == cudaSuccess) {
      undo.args().put<uint64_t>(base);
      undo.run();
    }
    return cudaErrorMemoryAllocation;
  }
  std::lock_guard lock(opened().mutex);
  opened().bases.insert(base);
  *ptr = reinterpret_cast<void*>(base);
  return cudaSuccess;
}

cudaError_t close_memory(void* ptr) {
  auto base = reinterpret_cast<uint64_t>(ptr);
  {
    std::lock_guard lock(opened().mutex);
    if (opened().bases.erase(base) == 0) return cudaErrorInvalidValue;
  }
  auto range = MemoryMap::get().remove_device(base);
  if (!range) return cudaErrorInvalidValue;
  Call call(proto::kOpIpcCloseMemHandle);
  int32_t remote;
  if (cudaError_t e = call.to_device(range->device, &remote)) return e;
  call.args().put<uint64_t>(base);
  return call.run();
}

}  // namespace

extern "C" cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr) {
  return api([&]() -> cudaError_t {
    if (!handle) return cudaErrorInvalidValue;
    if (cudaError_t e = Runtime::get().ensure_init()) return e;
    auto range = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(devPtr));
    if (!range) return cudaErrorInvalidValue;
    Call call(proto::kOpIpcGetMemHandle);
    int32_t remote;
    if (cudaError_t e = call.to_device(range->device, &remote)) return e;
    call.args().put<uint64_t>(range->base).put<uint64_t>(range->size);
    if (cudaError_t e = call.run()) return e;
    pack(handle->reserved, kMemoryMagic, call.reply());
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle, unsigned int flags) {
  return api([&] { return open_memory(devPtr, handle, flags); });
}

extern "C" cudaError_t cudaIpcCloseMemHandle(void* devPtr) {
  return api([&] { return close_memory(devPtr); });
}

extern "C" cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  return api([&]() -> cudaError_t {
    if (!handle) return cudaErrorInvalidValue;
    Call call(proto::kOpIpcGetEventHandle);
    uint64_t remote;
    if (cudaError_t e = call.to_event(event, &remote)) return e;
    call.args().put<uint64_t>(remote);
    if (cudaError_t e = call.run()) return e;
    pack(handle->reserved, kEventMagic, call.reply());
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  return api([&]() -> cudaError_t {
    if (!event) return cudaErrorInvalidValue;
    Call call(proto::kOpIpcOpenEventHandle);
    if (cudaError_t e = call.to_current_device()) return e;
    if (!unpack(handle.reserved, kEventMagic, call.args())) return cudaErrorInvalidResourceHandle;
    if (cudaError_t e = call.run()) return e;
    *event = events().add(call.device_index(), call.reply().get<uint64_t>());
    return cudaSuccess;
  });
}
