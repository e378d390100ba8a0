// What a library front-end of rgpu's (libnccl.so.2: src/client/nccl) needs
// from the one client core inside rgpu's libcudart.so.13 / libcuda.so.1: the
// devices, routing, and synchronous calls to a device's worker. A front-end
// is a library of its own that must not carry a second client core (a second
// set of sessions), so it asks for this table through cuGetExportTable, under
// an id of rgpu's, and gets nothing from NVIDIA's driver. Plain C: the two
// libraries carry their own C++ runtimes.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rgpu::client {

// {72677075-2d66-726f-6e74-2d656e647331}: "rgpu-front-ends1".
constexpr unsigned char kFrontEndBridgeUuid[16] = {0x72, 0x67, 0x70, 0x75, 0x2d, 0x66, 0x72, 0x6f,
                                                   0x6e, 0x74, 0x2d, 0x65, 0x6e, 0x64, 0x73, 0x31};

// Every function returns a cudaError_t value.
struct FrontEndBridge {
  size_t size;  // sizeof(FrontEndBridge) of the core that answers
  int (*current_device)(int* device);
  int (*device_count)(int* count);
  // An id equal for the devices of one server session, and the device's
  // ordinal on its server.
  int (*device_server)(int device, const void** server, int* ordinal);
  // A stream's device and its server handle (a default stream: the
  // thread's current device).
  int (*stream)(void* stream, int* device, uint64_t* remote);
  // A synchronous call to the device's worker (asynchronous CUDA errors stay
  // pending for the application's next CUDA call); the reply's bytes are
  // copied into reply up to cap, *reply_len is their full count.
  int (*call)(uint16_t op, int device, const void* args, size_t args_len, void* reply, size_t cap,
              size_t* reply_len);
  // An asynchronous call: queued in order with the device's other calls, no
  // reply (what fails there is the front-end's to report).
  int (*post)(uint16_t op, int device, const void* args, size_t args_len);
  // cudaSuccess when [ptr, ptr + bytes) lies in one device allocation of
  // `device` the client knows.
  int (*device_memory)(int device, uint64_t ptr, size_t bytes);
};

}  // namespace rgpu::client
