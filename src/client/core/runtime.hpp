// The client's process-wide state: the remote devices the application sees
// and the sessions that reach them. Connects lazily at the first CUDA call.
#pragma once
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "client/core/device_list.hpp"
#include "client/core/session.hpp"

namespace rgpu::client {

struct VirtualDevice {
  Session* session = nullptr;
  int remote = 0;  // the GPU's ordinal on its server
  std::once_flag props_once;
  cudaDeviceProp props{};
  cudaError_t props_status = cudaSuccess;
  // cudaDeviceGetAttribute's answers, kept as they never change for a
  // device: kKnownAttribute | the value's 32 bits, or 0 before the first.
  std::array<std::atomic<uint64_t>, cudaDevAttrMax> attributes{};
  static constexpr uint64_t kKnownAttribute = uint64_t{1} << 32;
};

class Runtime {
 public:
  static Runtime& get();

  // Connects on first use; the error is sticky, as CUDA's init errors are.
  cudaError_t ensure_init();
  // ensure_init() has run and succeeded (the driver API asks, without connecting).
  bool initialized() const { return ready_.load(); }
  int device_count() const { return static_cast<int>(devices_.size()); }
  VirtualDevice* device(int index);
  // Properties are read once and kept: they never change for a device.
  cudaError_t properties(int index, const cudaDeviceProp** out);

  // Waits for every session's background copies: page-locked memory they
  // use is about to go.
  void finish_background_copies();

  // The session `from` moved to `to` (docs/migration.md): its device is
  // served by `to`'s GPU `gpu` from now on; `from` is retired, kept for the
  // threads' lanes that name it. The application's calls must be stopped
  // (MoveGate).
  void replace_session(Session* from, std::unique_ptr<Session> to, int gpu);

  // Sessions over shm, each with one of its GPUs (for the frame header).
  std::vector<std::pair<Session*, int>> sharing_sessions() const;

  static int current_device();
  // Makes the device's primary context the thread's current context, as
  // cudaSetDevice does.
  static void set_current_device(int index);
  // The thread's current context: a device and the session slot of one of
  // its green contexts (0: the primary context). Calls on the thread's
  // current device run in that context on the server.
  static void set_current_context(int index, uint16_t green_slot);
  static uint16_t current_green_slot();
  // The current device of threads that never set one (cudaSetValidDevices).
  static void set_implicit_device(int index);

 private:
  Runtime() = default;
  void init();

  std::once_flag init_once_;
  cudaError_t init_status_ = cudaSuccess;
  std::atomic<bool> ready_{false};
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::unique_ptr<Session>> retired_;
  std::vector<std::unique_ptr<VirtualDevice>> devices_;
};

// GPU `gpu`'s properties as `session`'s server reports them.
cudaError_t server_device_properties(Session& session, int gpu, cudaDeviceProp* out);

// Whether devices a and b (both existing) are GPUs of one server.
bool same_server(int a, int b);

}  // namespace rgpu::client
