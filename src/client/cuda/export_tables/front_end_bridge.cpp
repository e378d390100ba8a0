// The table rgpu's library front-ends ask for (front_end_bridge.hpp).
#include "client/core/front_end_bridge.hpp"

#include <cstring>

#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/runtime.hpp"
#include "client/cuda/export_tables/export_tables.hpp"

namespace rgpu::client {
namespace {

int current_device(int* device) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  *device = Runtime::current_device();
  return cudaSuccess;
}

int device_count(int* count) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  *count = Runtime::get().device_count();
  return cudaSuccess;
}

int device_server(int device, const void** server, int* ordinal) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  VirtualDevice* d = Runtime::get().device(device);
  if (!d) return cudaErrorInvalidDevice;
  *server = d->session;
  *ordinal = d->remote;
  return cudaSuccess;
}

int stream(void* s, int* device, uint64_t* remote) {
  Call call(0);
  if (cudaError_t e = call.to_stream(static_cast<cudaStream_t>(s), remote)) return e;
  *device = call.device_index();
  return cudaSuccess;
}

int call(uint16_t op, int device, const void* args, size_t args_len, void* reply, size_t cap, size_t* reply_len) {
  Call c(op);
  int32_t ordinal = 0;
  if (cudaError_t e = c.to_device(device, &ordinal)) return e;
  c.args().put_raw(args, args_len);
  if (cudaError_t e = c.quiet().run()) return e;
  auto bytes = c.reply().rest();
  *reply_len = bytes.size();
  std::memcpy(reply, bytes.data(), std::min(cap, bytes.size()));
  return cudaSuccess;
}

int post(uint16_t op, int device, const void* args, size_t args_len) {
  Call c(op);
  int32_t ordinal = 0;
  if (cudaError_t e = c.to_device(device, &ordinal)) return e;
  c.args().put_raw(args, args_len);
  return c.post();
}

int device_memory(int device, uint64_t ptr, size_t bytes) {
  auto range = MemoryMap::get().find_device(ptr, bytes);
  // Memory of a graph's allocation node lives as the GPU runs the graph:
  // not known here.
  return range && range->device == device && !range->graph_memory ? cudaSuccess : cudaErrorInvalidValue;
}

const FrontEndBridge kBridge{sizeof(FrontEndBridge), current_device, device_count, device_server, stream, call,
                             post, device_memory};

}  // namespace

const void* front_end_bridge_table() { return &kBridge; }

}  // namespace rgpu::client
