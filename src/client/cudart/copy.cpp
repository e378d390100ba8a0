// Copy and memset entry points; the work is in copy_engine.
#include <cuda_runtime_api.h>

#include <cstring>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/given_variables.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/module_registry.hpp"
#include "client/cudart/copy_engine.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

extern "C" cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return api([&] {
    return known_memcpy_kind(kind) ? copy_linear(dst, src, count, kind, nullptr, false)
                                   : cudaErrorInvalidMemcpyDirection;
  });
}

extern "C" cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                       cudaStream_t stream) {
  return api([&] {
    return known_memcpy_kind(kind) ? copy_linear(dst, src, count, kind, stream, true)
                                   : cudaErrorInvalidMemcpyDirection;
  });
}

extern "C" cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                    size_t height, cudaMemcpyKind kind) {
  return api([&] { return copy_2d(dst, dpitch, src, spitch, width, height, kind, nullptr, false); });
}

extern "C" cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                         size_t width, size_t height, cudaMemcpyKind kind,
                                         cudaStream_t stream) {
  return api([&] { return copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, true); });
}

namespace {

// Page-locked host memory is device-accessible in CUDA, so a memset may name
// it (XLA clears its pinned buffers so): the host writes it once the stream's
// earlier work is done, which is when the GPU would have.
cudaError_t memset_host(const HostRange& r, void* ptr, size_t pitch, int value, size_t width, size_t height,
                        cudaStream_t stream) {
  if (reinterpret_cast<uint64_t>(ptr) + pitch * (height - 1) + width > r.base + r.size) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaStreamSynchronize(stream)) return e;
  for (size_t row = 0; row < height; ++row) std::memset(static_cast<char*>(ptr) + row * pitch, value, width);
  return cudaSuccess;
}

// Memsets are asynchronous as in CUDA; the range is checked here so a bad
// pointer still fails at the call.
cudaError_t memset_2d(void* ptr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  if (width == 0 || height == 0) return cudaSuccess;
  if (height > 1 && width > pitch) return cudaErrorInvalidValue;
  if (auto device = device_side_for(ptr, stream)) ptr = reinterpret_cast<void*>(*device);
  auto range = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(ptr), pitch * (height - 1) + width);
  std::optional<int> device = range ? std::optional<int>(range->device) : std::nullopt;
  if (!range) {
    if (auto host = MemoryMap::get().find_host(reinterpret_cast<uint64_t>(ptr)))
      return memset_host(*host, ptr, pitch, value, width, height, stream);
    device = capturing_device(stream);
  }
  if (!device) {
    RGPU_LOG(debug, "memset of %zu x %zu bytes at %p: not within one range of device memory", width, height, ptr);
    return cudaErrorInvalidValue;
  }
  Call call(height == 1 ? proto::kOpMemset : proto::kOpMemset2D);
  uint64_t s;
  if (cudaError_t e = route_to_memory(call, *device, stream, &s)) return e;
  if (height == 1)
    call.args().put<uint64_t>(reinterpret_cast<uint64_t>(ptr)).put<int32_t>(value).put<uint64_t>(width);
  else
    call.args()
        .put<uint64_t>(reinterpret_cast<uint64_t>(ptr))
        .put<uint64_t>(pitch)
        .put<int32_t>(value)
        .put<uint64_t>(width)
        .put<uint64_t>(height);
  call.args().put<uint64_t>(s);
  return call.post();
}

}  // namespace

extern "C" cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  return api([&] { return memset_2d(devPtr, count, value, count, 1, nullptr); });
}

extern "C" cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return api([&] { return memset_2d(devPtr, count, value, count, 1, stream); });
}

extern "C" cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  return api([&] { return memset_2d(devPtr, pitch, value, width, height, nullptr); });
}

extern "C" cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                                         cudaStream_t stream) {
  return api([&] { return memset_2d(devPtr, pitch, value, width, height, stream); });
}

namespace {

cudaError_t symbol_on_current(const void* symbol, const LoadedVar** out) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  VarEntry* v = ModuleRegistry::get().find_var(symbol);
  if (!v) return cudaErrorInvalidSymbol;
  return ModuleRegistry::get().var_on(v, Runtime::current_device(), out);
}

cudaError_t symbol_copy(const void* symbol, void* host, size_t count, size_t offset, cudaMemcpyKind kind,
                        cudaStream_t stream, bool async, bool to_symbol) {
  const LoadedVar* v;
  if (cudaError_t e = symbol_on_current(symbol, &v)) return e;
  if (offset > v->size || count > v->size - offset) return cudaErrorInvalidValue;
  void* dev = reinterpret_cast<void*>(v->address + offset);
  bool other_device = kind == cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyDefault) other_device = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(host)).has_value();
  else if (kind != (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) && !other_device)
    return cudaErrorInvalidMemcpyDirection;
  cudaMemcpyKind k = other_device ? cudaMemcpyDeviceToDevice
                                  : (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
  return to_symbol ? copy_linear(dev, host, count, k, stream, async)
                   : copy_linear(host, dev, count, k, stream, async);
}

}  // namespace

extern "C" cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                                          cudaMemcpyKind kind) {
  return api([&] { return symbol_copy(symbol, const_cast<void*>(src), count, offset, kind, nullptr, false, true); });
}

extern "C" cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                            cudaMemcpyKind kind) {
  return api([&] { return symbol_copy(symbol, dst, count, offset, kind, nullptr, false, false); });
}

extern "C" cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count,
                                               size_t offset, cudaMemcpyKind kind, cudaStream_t stream) {
  return api([&] { return symbol_copy(symbol, const_cast<void*>(src), count, offset, kind, stream, true, true); });
}

extern "C" cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                                 cudaMemcpyKind kind, cudaStream_t stream) {
  return api([&] { return symbol_copy(symbol, dst, count, offset, kind, stream, true, false); });
}

extern "C" cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  return api([&]() -> cudaError_t {
    if (!devPtr) return cudaErrorInvalidValue;
    const LoadedVar* v;
    if (cudaError_t e = symbol_on_current(symbol, &v)) return e;
    *devPtr = reinterpret_cast<void*>(v->address);
    // The application holds the address: a session move keeps it standing
    // for the variable (given_variables.hpp).
    VarEntry* entry = ModuleRegistry::get().find_var(symbol);
    const int device = Runtime::current_device();
    GivenVariables::get().add({device, v->address, v->size, entry, [entry, device](uint64_t* at) {
                                 const LoadedVar* now = nullptr;
                                 cudaError_t e = ModuleRegistry::get().var_on(entry, device, &now);
                                 *at = e ? 0 : now->address;
                                 return e;
                               }});
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  return api([&]() -> cudaError_t {
    if (!size) return cudaErrorInvalidValue;
    const LoadedVar* v;
    if (cudaError_t e = symbol_on_current(symbol, &v)) return e;
    *size = v->size;
    return cudaSuccess;
  });
}
