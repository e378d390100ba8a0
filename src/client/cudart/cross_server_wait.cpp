#include "client/cudart/cross_server_wait.hpp"

#include <cuda.h>

#include <map>
#include <mutex>
#include <thread>

#include "client/cuda/stream_memops.hpp"
#include "common/log.hpp"

namespace rgpu::client {
namespace {

cudaError_t post_mem_op(cudaStream_t stream, CUstreamBatchMemOpType type, void* flag, uint32_t value,
                        unsigned flags) {
  CUstreamBatchMemOpParams p{};
  p.writeValue.operation = type;
  p.writeValue.address = reinterpret_cast<CUdeviceptr>(flag);
  p.writeValue.value = value;
  p.writeValue.flags = flags;
  return post_mem_ops(stream, {&p, 1}, 0);
}

// One non-blocking stream per device for setting flags: the legacy stream
// would wait for the very stream the flag releases.
cudaError_t flag_stream(int device, cudaStream_t* out) {
  static std::mutex mutex;
  static auto* by_device = new std::map<int, cudaStream_t>;
  std::lock_guard lock(mutex);
  auto it = by_device->find(device);
  if (it == by_device->end()) {
    cudaStream_t s;
    if (cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) return e;
    it = by_device->emplace(device, s).first;
  }
  *out = it->second;
  return cudaSuccess;
}

}  // namespace

cudaError_t wait_across_servers(cudaStream_t stream, int stream_device, cudaEvent_t event) {
  cudaError_t done = cudaEventQuery(event);
  if (done != cudaErrorNotReady) return done;  // complete (or failed): nothing to wait for
  int previous;
  if (cudaError_t e = cudaGetDevice(&previous)) return e;
  if (cudaError_t e = cudaSetDevice(stream_device)) return e;
  void* flag = nullptr;
  cudaStream_t setter = nullptr;
  cudaError_t e = cudaMalloc(&flag, sizeof(uint32_t));
  if (!e) e = flag_stream(stream_device, &setter);
  if (!e) e = cudaMemsetAsync(flag, 0, sizeof(uint32_t), stream);
  if (!e) e = post_mem_op(stream, CU_STREAM_MEM_OP_WAIT_VALUE_32, flag, 1, CU_STREAM_WAIT_VALUE_GEQ);
  cudaSetDevice(previous);
  if (e) {
    if (flag) cudaFree(flag);
    return e;
  }
  std::thread([=] {
    cudaError_t waited = cudaEventSynchronize(event);
    if (waited) RGPU_LOG(warn, "a wait for another server's event ended with %s", cudaGetErrorName(waited));
    cudaSetDevice(stream_device);
    // Released even when the event failed: the error is the application's to
    // see on the event, and the stream must not hang.
    if (post_mem_op(setter, CU_STREAM_MEM_OP_WRITE_VALUE_32, flag, 1, 0) == cudaSuccess)
      cudaStreamSynchronize(setter);
    cudaFreeAsync(flag, stream);
  }).detach();
  return cudaSuccess;
}

}  // namespace rgpu::client
