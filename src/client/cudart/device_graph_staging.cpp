// Staging in device memory for graph copies of pageable host memory where
// the server cannot reach this process (tcp, ucx; see core/graph_staging.hpp):
// slabs from cudaMalloc, and the host node's copies on one non-blocking
// stream per device. Not the legacy default stream nor a device-wide sync:
// the graph's stream waits for the host node, and either would wait for it.
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

#include "client/core/graph_staging.hpp"

namespace rgpu::client {
namespace {

std::mutex g_mutex;
std::map<int, cudaStream_t>& streams() {
  static auto* m = new std::map<int, cudaStream_t>;
  return *m;
}

cudaStream_t stream_of(int device) {
  std::lock_guard lock(g_mutex);
  auto it = streams().find(device);
  return it == streams().end() ? nullptr : it->second;
}

// Makes the current device's staging stream unless it has one (no lock across the call).
cudaError_t ensure_stream(int device) {
  if (stream_of(device)) return cudaSuccess;
  cudaStream_t s;
  if (cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) return e;
  std::lock_guard lock(g_mutex);
  if (!streams().emplace(device, s).second) cudaStreamDestroy(s);  // another thread's came first
  return cudaSuccess;
}

// A slab on `device`; its staging stream comes with the first. A slab may
// be taken while this thread captures a stream (a captured copy), and CUDA
// refuses allocations in the global capture mode: relaxed meanwhile.
char* allocate(int device, size_t bytes) {
  int previous;
  if (cudaGetDevice(&previous) || cudaSetDevice(device)) return nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  void* p = nullptr;
  if (ensure_stream(device) || cudaMalloc(&p, bytes)) p = nullptr;
  cudaThreadExchangeStreamCaptureMode(&mode);
  cudaSetDevice(previous);
  return static_cast<char*>(p);
}

cudaError_t move(int device, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                 bool upload) {
  cudaStream_t s = stream_of(device);
  if (!s) return cudaErrorInvalidResourceHandle;
  cudaMemcpyKind kind = upload ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (cudaError_t e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s)) return e;
  return cudaStreamSynchronize(s);
}

[[maybe_unused]] const bool g_set = (set_device_staging({allocate, move}), true);

}  // namespace
}  // namespace rgpu::client
