#include "client/cudart/copy_engine.hpp"

#include <cstring>
#include <vector>

#include "client/core/call.hpp"
#include "client/core/handles.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/per_thread_stream.hpp"
#include "client/graph/capture.hpp"
#include "client/cudart/cross_server_copy.hpp"
#include "client/cudart/coherent_memory.hpp"
#include "client/cudart/staging_ring.hpp"
#include "client/cudart/striped_copy.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"

namespace rgpu::client {
namespace {

enum class Dir { h2h, h2d, d2h, d2d };

bool is_device(const void* p) { return MemoryMap::get().find_device(reinterpret_cast<uint64_t>(p)).has_value(); }

// Page-locked host memory is device-accessible under unified addressing: a
// copy may name it as either side's device memory (XLA does).
bool page_locked_host(const void* p) {
  return !is_device(p) && MemoryMap::get().find_host(reinterpret_cast<uint64_t>(p)).has_value();
}

// Promoted page-locked memory is copied where the GPU has it, when the
// stream is of its device's server (its host pages, which only fetch from
// there, serve other servers' streams). Either side moved makes the kind
// cudaMemcpyDefault.
void to_device_side(void** dst, const void** src, cudaMemcpyKind* kind, cudaStream_t stream) {
  auto d = device_side_for(*dst, stream);
  auto s = device_side_for(*src, stream);
  if (d) *dst = reinterpret_cast<void*>(*d);
  if (s) *src = reinterpret_cast<const void*>(*s);
  if (d || s) *kind = cudaMemcpyDefault;
}

cudaError_t direction(const void* dst, const void* src, cudaMemcpyKind kind, Dir* out) {
  bool device_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  bool device_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  if ((device_src && page_locked_host(src)) || (device_dst && page_locked_host(dst))) kind = cudaMemcpyDefault;
  // Managed and mapped memory may be named as either side; the copy here is
  // not read (it went back to the GPU before this call).
  if (coherent_memory::contains(reinterpret_cast<uint64_t>(src)) ||
      coherent_memory::contains(reinterpret_cast<uint64_t>(dst)))
    kind = cudaMemcpyDefault;
  switch (kind) {
    case cudaMemcpyHostToHost: *out = Dir::h2h; return cudaSuccess;
    case cudaMemcpyHostToDevice: *out = Dir::h2d; return cudaSuccess;
    case cudaMemcpyDeviceToHost: *out = Dir::d2h; return cudaSuccess;
    case cudaMemcpyDeviceToDevice: *out = Dir::d2d; return cudaSuccess;
    case cudaMemcpyDefault: {
      bool d = is_device(dst), s = is_device(src);
      *out = s ? (d ? Dir::d2d : Dir::d2h) : (d ? Dir::h2d : Dir::h2h);
      return cudaSuccess;
    }
  }
  return cudaErrorInvalidMemcpyDirection;
}

// The device that owns [p, p + extent); device memory the client does not
// know is refused here, before any round trip.
cudaError_t owner(const void* p, size_t extent, int* device) {
  auto r = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(p), extent);
  if (!r) {
    RGPU_LOG(debug, "copy of %zu bytes at %p: not within one range of device memory", extent, p);
    return cudaErrorInvalidValue;
  }
  *device = r->device;
  return cudaSuccess;
}

// owner() for a side of a device-to-device copy, which a capture may take
// with memory the client does not know (capturing_device).
cudaError_t device_side_owner(const void* p, size_t extent, cudaStream_t stream, int* device) {
  if (auto r = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(p), extent)) {
    *device = r->device;
    return cudaSuccess;
  }
  if (auto captured = capturing_device(stream)) {
    *device = *captured;
    return cudaSuccess;
  }
  return owner(p, extent, device);  // refuses, and logs where
}

cudaError_t wait_stream(cudaStream_t stream) { return cudaStreamSynchronize(stream); }

// The device whose server has `stream` (the current device's for a default stream).
int stream_device(cudaStream_t stream) { return created_stream_device(stream).value_or(Runtime::current_device()); }

}  // namespace

std::optional<int> created_stream_device(cudaStream_t stream) {
  stream = effective_stream(stream);
  RemoteObject o;
  if (is_default_stream(stream) || !streams().find(stream, &o)) return std::nullopt;
  return o.device;
}

std::optional<int> capturing_device(cudaStream_t stream) {
  Capture capture;
  if (!capture_of(stream, &capture)) return std::nullopt;
  return stream_device(stream);
}

std::optional<uint64_t> device_side_for(const void* p, cudaStream_t stream) {
  auto device_address = MemoryMap::get().device_side(reinterpret_cast<uint64_t>(p));
  if (!device_address) return std::nullopt;
  auto range = MemoryMap::get().find_device(*device_address);
  int device = stream_device(stream);
  if (!range || !Runtime::get().device(device) || !same_server(range->device, device)) return std::nullopt;
  return device_address;
}

// Routes to the device that owns the memory, or to the named stream's. As
// locally, the stream may belong to another device (cuFFT's multi-GPU
// copies name one device's memory on another's stream): its worker reaches
// that memory when both GPUs are the same server's. Across servers nothing
// could order the copy on the stream, so it is refused.
cudaError_t route_to_memory(Call& call, int device, cudaStream_t stream, uint64_t* remote_stream) {
  stream = effective_stream(stream);
  if (is_default_stream(stream)) {
    *remote_stream = reinterpret_cast<uint64_t>(stream);
    int32_t remote_device;
    return call.to_device(device, &remote_device);
  }
  if (cudaError_t e = call.to_stream(stream, remote_stream)) return e;
  if (same_server(device, call.device_index())) return cudaSuccess;
  RGPU_LOG(error, "a copy of device %d's memory on a stream of device %d: the devices are on different servers, "
           "and rgpu cannot order the copy on that stream; use a stream of device %d",
           device, call.device_index(), device);
  return cudaErrorInvalidValue;
}

namespace {

// A small blocking upload from shared page-locked memory goes with its
// request instead: on the H100 machine the driver's DMA from memory the
// worker registered took ~3 us longer than the staged copy (64 B: 10.3 vs
// 7.4 us round trip). Downloads are quicker as DMA into shared memory.
constexpr size_t kInlineUploadMax = 4096;

// Host memory the device's server has mapped (shm): the copy is the server's
// own DMA, and nothing but the call crosses the socket.
bool shared_with(int device, const void* host, size_t n) {
  return MemoryMap::get().find_shared(reinterpret_cast<uint64_t>(host), n) &&
         Runtime::get().device(device)->session->shares_memory();
}

// Application memory that is page-locked over all of [p, p + n); not
// promoted memory, whose pages a background copy must not fault in.
bool page_locked(const void* p, size_t n) {
  auto r = MemoryMap::get().find_host(reinterpret_cast<uint64_t>(p));
  return r && !r->coherent && reinterpret_cast<uint64_t>(p) - r->base <= r->size - n;
}

// Asynchronous copies of page-locked memory up to this size go on the
// calling thread's own connection (Lane::post_download), larger ones on
// threads of their own: the hand-over to another thread cost a small
// download followed by a synchronize (PyTorch's .item()) tens of
// microseconds on the H200 machine.
constexpr size_t kPostedDownloadMax = 64 << 10;

// An asynchronous copy from or to page-locked memory the server cannot
// reach: it returns at once, as locally, and threads of the session move the
// data, a large copy in stripes on several connections at once over tcp (as
// striped_copy.hpp's synchronous ones). False when that is not possible (the
// caller copies itself): on the per-thread default stream, which only this
// thread's connection names, or for a download whose stripes are too big for
// the worker to stage whole.
bool copy_in_background(Call& call, uint64_t stream, const void* device_ptr, void* host, size_t n, bool to_device) {
  if (stream == reinterpret_cast<uint64_t>(cudaStreamPerThread)) return false;
  VirtualDevice* d = call.device();
  const unsigned parts = stripes_for(call.device_index(), n);
  if (!to_device && n / parts > proto::kMaxQueuedDownload) return false;
  return d->session->copy_in_background(
      {call.wire_device(), stream, reinterpret_cast<uint64_t>(device_ptr), host, n, to_device}, parts);
}

}  // namespace

// Even device-to-host copies can stay asynchronous here: the data lands in
// the application's memory when the stream gets there, as locally.
cudaError_t copy_shared(int device, const void* dev_ptr, const void* host, size_t n, bool to_device, bool application,
                        cudaStream_t stream, bool async) {
  Call call(proto::kOpMemcpyShared);
  uint64_t s;
  if (cudaError_t e = route_to_memory(call, device, stream, &s)) return e;
  call.args()
      .put<uint64_t>(reinterpret_cast<uint64_t>(dev_ptr))
      .put<uint64_t>(reinterpret_cast<uint64_t>(host))
      .put<uint64_t>(n)
      .put<uint8_t>(to_device)
      .put<uint64_t>(s)
      .put<uint8_t>(!async)
      .put<uint8_t>(application);
  return async ? call.post() : call.run();
}

cudaError_t copy_on_server(int route_device, void* dst, const void* src, size_t n, cudaStream_t stream, bool async) {
  Call call(proto::kOpMemcpyDtoD);
  uint64_t s;
  if (cudaError_t e = route_to_memory(call, route_device, stream, &s)) return e;
  call.args()
      .put<uint64_t>(reinterpret_cast<uint64_t>(dst))
      .put<uint64_t>(reinterpret_cast<uint64_t>(src))
      .put<uint64_t>(n)
      .put<uint64_t>(s)
      .put<uint8_t>(!async);
  return async ? call.post() : call.run();
}

bool known_memcpy_kind(const cudaMemcpyKind& kind) {
  return proto::enum_in_range(proto::enum_number(kind), cudaMemcpyHostToHost, cudaMemcpyDefault);
}

cudaError_t copy_linear(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream,
                        bool async) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  to_device_side(&dst, &src, &kind, stream);
  Dir dir;
  if (cudaError_t e = direction(dst, src, kind, &dir)) return e;
  if (n == 0) return cudaSuccess;
  uint64_t s;
  int dev;
  switch (dir) {
    case Dir::h2h:
      return copy_2d(dst, n, src, n, n, 1, cudaMemcpyHostToHost, stream, async);
    case Dir::h2d: {
      if (cudaError_t e = owner(dst, n, &dev)) return e;
      bool shared = shared_with(dev, src, n);
      if (shared && (async || n > kInlineUploadMax)) return copy_shared(dev, dst, src, n, true, true, stream, async);
      // A capture takes the copy into its graph (shared memory's above too).
      if (cudaError_t e; !shared && async && captured_host_copy(stream, dst, n, src, n, n, 1, true, &e)) return e;
      if (cudaError_t e; ring_copy_to_device(dev, dst, src, n, stream, async, &e)) return e;
      Call call(proto::kOpMemcpyHtoD);
      if (cudaError_t e = route_to_memory(call, dev, stream, &s)) return e;
      // A small upload goes with its request at once (as a pageable one).
      if (async && n > kPostedDownloadMax && page_locked(src, n) &&
          copy_in_background(call, s, dst, const_cast<void*>(src), n, true))
        return cudaSuccess;
      call.args().put<uint64_t>(reinterpret_cast<uint64_t>(dst)).put<uint64_t>(s).put<uint8_t>(!async);
      if (cudaError_t e; striped_copy(dev, s, dst, src, n, true, !async, &e)) return e;
      iovec data{const_cast<void*>(src), n};
      // The data is on the wire when post() returns, so the application may
      // reuse its buffer at once, as after a staged pageable copy.
      return async ? call.post({&data, 1}) : call.run({&data, 1});
    }
    case Dir::d2h: {
      if (cudaError_t e = owner(src, n, &dev)) return e;
      if (shared_with(dev, dst, n)) return copy_shared(dev, src, dst, n, false, true, stream, async);
      if (cudaError_t e; async && captured_host_copy(stream, dst, n, src, n, n, 1, false, &e)) return e;
      if (cudaError_t e; ring_copy_to_host(dev, dst, src, n, stream, &e)) return e;
      Call call(proto::kOpMemcpyDtoH);
      if (cudaError_t e = route_to_memory(call, dev, stream, &s)) return e;
      const bool async_page_locked = async && page_locked(dst, n);
      if (async_page_locked && n > kPostedDownloadMax && copy_in_background(call, s, src, dst, n, false))
        return cudaSuccess;
      call.args().put<uint64_t>(reinterpret_cast<uint64_t>(src)).put<uint64_t>(n).put<uint64_t>(s);
      if (async_page_locked && n <= kPostedDownloadMax) return call.post_download(dst, n, s);
      if (cudaError_t e; striped_copy(dev, s, dst, src, n, false, true, &e)) return e;
      // Into pageable memory even an asynchronous copy returns only once the
      // data is there, as locally.
      return call.run_into_synchronizing(dst, n, s);
    }
    case Dir::d2d: {
      int src_dev;
      if (cudaError_t e = device_side_owner(dst, n, stream, &dev)) return e;
      if (cudaError_t e = device_side_owner(src, n, stream, &src_dev)) return e;
      if (!same_server(src_dev, dev)) {
        if (stream)
          if (cudaError_t e = cudaStreamSynchronize(stream)) return e;
        return copy_across_servers(dst, src, n);
      }
      return copy_on_server(dev, dst, src, n, stream, async);
    }
  }
  return cudaErrorInvalidMemcpyDirection;
}

cudaError_t copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                    cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  to_device_side(&dst, &src, &kind, stream);
  Dir dir;
  if (cudaError_t e = direction(dst, src, kind, &dir)) return e;
  if (width == 0 || height == 0) return cudaSuccess;
  auto* d = static_cast<uint8_t*>(dst);
  auto* sp = static_cast<const uint8_t*>(src);
  uint64_t s;
  int dev;
  switch (dir) {
    case Dir::h2h:
      if (async)
        if (cudaError_t e = wait_stream(stream)) return e;
      for (size_t r = 0; r < height; ++r) std::memmove(d + r * dpitch, sp + r * spitch, width);
      return cudaSuccess;
    case Dir::h2d: {
      if (cudaError_t e = owner(dst, dpitch * (height - 1) + width, &dev)) return e;
      if (cudaError_t e; async && captured_host_copy(stream, dst, dpitch, src, spitch, width, height, true, &e))
        return e;
      Call call(proto::kOpMemcpy2DHtoD);
      if (cudaError_t e = route_to_memory(call, dev, stream, &s)) return e;
      call.args().put<uint64_t>(reinterpret_cast<uint64_t>(dst)).put<uint64_t>(dpitch);
      call.args().put<uint64_t>(width).put<uint64_t>(height).put<uint64_t>(s).put<uint8_t>(!async);
      // Rows go out as they lie in memory: one gather list, no packing copy.
      std::vector<iovec> rows(spitch == width ? 1 : height);
      if (spitch == width)
        rows[0] = {const_cast<uint8_t*>(sp), width * height};
      else
        for (size_t r = 0; r < height; ++r) rows[r] = {const_cast<uint8_t*>(sp + r * spitch), width};
      return async ? call.post(rows) : call.run(rows);
    }
    case Dir::d2h: {
      if (cudaError_t e = owner(src, spitch * (height - 1) + width, &dev)) return e;
      if (cudaError_t e; async && captured_host_copy(stream, dst, dpitch, src, spitch, width, height, false, &e))
        return e;
      Call call(proto::kOpMemcpy2DDtoH);
      if (cudaError_t e = route_to_memory(call, dev, stream, &s)) return e;
      call.args().put<uint64_t>(reinterpret_cast<uint64_t>(src)).put<uint64_t>(spitch);
      call.args().put<uint64_t>(width).put<uint64_t>(height).put<uint64_t>(s);
      if (dpitch == width) return call.run_into(dst, width * height);
      std::vector<uint8_t> packed(width * height);
      if (cudaError_t e = call.run_into(packed.data(), packed.size())) return e;
      for (size_t r = 0; r < height; ++r) std::memcpy(d + r * dpitch, packed.data() + r * width, width);
      return cudaSuccess;
    }
    case Dir::d2d: {
      int src_dev;
      if (cudaError_t e = device_side_owner(dst, dpitch * (height - 1) + width, stream, &dev)) return e;
      if (cudaError_t e = device_side_owner(src, spitch * (height - 1) + width, stream, &src_dev)) return e;
      if (!same_server(src_dev, dev)) return cudaErrorInvalidValue;
      Call call(proto::kOpMemcpy2DDtoD);
      if (cudaError_t e = route_to_memory(call, dev, stream, &s)) return e;
      call.args().put<uint64_t>(reinterpret_cast<uint64_t>(dst)).put<uint64_t>(dpitch);
      call.args().put<uint64_t>(reinterpret_cast<uint64_t>(src)).put<uint64_t>(spitch);
      call.args().put<uint64_t>(width).put<uint64_t>(height).put<uint64_t>(s).put<uint8_t>(!async);
      return async ? call.post() : call.run();
    }
  }
  return cudaErrorInvalidMemcpyDirection;
}

}  // namespace rgpu::client
