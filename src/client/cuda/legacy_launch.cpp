// The legacy execution control of the driver API (deprecated, still
// exported): a function's block shape, shared memory and parameter buffer
// set call by call, then cuLaunch / cuLaunchGrid(Async), which launch with
// that buffer as cuLaunchKernel's `extra`. The state lives with the
// function's handle, so it goes when the module is unloaded.
#include "client/cuda/cuda_api.hpp"

#include <array>
#include <cstring>
#include <memory>
#include <mutex>

#include "client/cuda/driver_errors.hpp"
#include "client/cuda/module_handles.hpp"

// The most parameter bytes a kernel takes.
constexpr size_t kMaxParamBytes = 32764;

struct rgpu::client::LegacyLaunchState {
  int block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  size_t param_size = 0;
  std::array<unsigned char, kMaxParamBytes> params{};
};

using namespace rgpu::client;

namespace {

std::mutex g_mutex;

// Runs `f` on the function's state, with the lock held.
template <typename F>
CUresult with_state(CUfunction hfunc, F&& f) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* fn = DriverHandles::get().find(hfunc);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(g_mutex);
  if (!fn->legacy) fn->legacy = std::make_shared<LegacyLaunchState>();
  return f(*fn->legacy, *fn);
}

// Parameters may be set before cuParamSetSize (NVIDIA's samples do so).
CUresult set_param(CUfunction hfunc, int offset, const void* value, unsigned bytes) {
  if (offset < 0 || (bytes && !value)) return CUDA_ERROR_INVALID_VALUE;
  return with_state(hfunc, [&](LegacyLaunchState& s, const DriverFunction&) {
    if (offset + size_t{bytes} > kMaxParamBytes) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(s.params.data() + offset, value, bytes);
    return CUDA_SUCCESS;
  });
}

}  // namespace

extern "C" CUresult CUDAAPI cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z) {
  if (x <= 0 || y <= 0 || z <= 0) return CUDA_ERROR_INVALID_VALUE;
  return with_state(hfunc, [&](LegacyLaunchState& s, const DriverFunction&) {
    s.block[0] = x;
    s.block[1] = y;
    s.block[2] = z;
    return CUDA_SUCCESS;
  });
}

extern "C" CUresult CUDAAPI cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes) {
  return with_state(hfunc, [&](LegacyLaunchState& s, const DriverFunction&) {
    s.shared_bytes = bytes;
    return CUDA_SUCCESS;
  });
}

extern "C" CUresult CUDAAPI cuParamSetSize(CUfunction hfunc, unsigned int numbytes) {
  if (numbytes > kMaxParamBytes) return CUDA_ERROR_INVALID_VALUE;
  return with_state(hfunc, [&](LegacyLaunchState& s, const DriverFunction&) {
    s.param_size = numbytes;
    return CUDA_SUCCESS;
  });
}

extern "C" CUresult CUDAAPI cuParamSeti(CUfunction hfunc, int offset, unsigned int value) {
  return set_param(hfunc, offset, &value, sizeof value);
}

extern "C" CUresult CUDAAPI cuParamSetf(CUfunction hfunc, int offset, float value) {
  return set_param(hfunc, offset, &value, sizeof value);
}

extern "C" CUresult CUDAAPI cuParamSetv(CUfunction hfunc, int offset, void* ptr, unsigned int numbytes) {
  return set_param(hfunc, offset, ptr, numbytes);
}

extern "C" CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream) {
  if (grid_width <= 0 || grid_height <= 0) return CUDA_ERROR_INVALID_VALUE;
  LegacyLaunchState s;
  if (CUresult e = with_state(f, [&](LegacyLaunchState& state, const DriverFunction&) {
        s = state;
        return CUDA_SUCCESS;
      }))
    return e;
  size_t size = s.param_size;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, s.params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  return cuLaunchKernel(f, grid_width, grid_height, 1, s.block[0], s.block[1], s.block[2], s.shared_bytes, hStream,
                        nullptr, extra);
}

extern "C" CUresult CUDAAPI cuLaunchGrid(CUfunction f, int grid_width, int grid_height) {
  return cuLaunchGridAsync(f, grid_width, grid_height, nullptr);
}

extern "C" CUresult CUDAAPI cuLaunch(CUfunction f) { return cuLaunchGridAsync(f, 1, 1, nullptr); }
