// Copies and memsets. Every device range is checked against the session's
// own memory before the backend sees it (captured device-only work aside:
// only_recorded).
#include <algorithm>
#include <vector>

#include "server/backend/graph_backend.hpp"
#include "server/worker/copy_pipeline.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/reply.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire.hpp"

namespace rgpu::server {
namespace {

void* at(uint64_t p) { return reinterpret_cast<void*>(p); }

// Extent of a pitched region: the last row needs only `width` bytes.
bool extent(size_t pitch, size_t width, size_t height, size_t* out) {
  if (height == 0 || width == 0) {
    *out = 0;
    return true;
  }
  if (width > pitch) return false;
  return !__builtin_mul_overflow(pitch, height - 1, out) && !__builtin_add_overflow(*out, width, out);
}

// A stream whose work is only recorded. As locally, where the driver checks
// no address until the graph runs, a copy or memset between device ranges
// captured there may name memory the session does not own (cuDNN captures
// its plans with placeholder addresses to learn their launches): the graph,
// if ever run, reaches no further than a kernel handed the same pointer,
// this session's own context.
bool only_recorded(SessionContext& s, uint64_t stream) {
  CaptureInfo info;
  return s.valid_stream(stream) && s.backend().graphs().capture_info(stream, &info) == cudaSuccess &&
         info.status == cudaStreamCaptureStatusActive;
}

// Device memory of the session, or any device range on a capturing stream.
bool device_side_ok(SessionContext& s, uint64_t ptr, size_t span, uint64_t stream) {
  return s.owns(ptr, span) || only_recorded(s, stream);
}

// Checks a pitched region of the session's memory; `bytes` receives
// width * height, the size of the packed rows on the wire.
int32_t check_region(SessionContext& s, uint64_t ptr, size_t pitch, size_t width, size_t height, size_t* bytes) {
  size_t span;
  if (!extent(pitch, width, height, &span) || __builtin_mul_overflow(width, height, bytes))
    return cudaErrorInvalidPitchValue;
  return s.owns(ptr, span) ? cudaSuccess : cudaErrorInvalidValue;
}

// check_region for a copy or memset that stays on the device (no staging of the worker's).
int32_t check_device_region(SessionContext& s, uint64_t ptr, size_t pitch, size_t width, size_t height,
                            uint64_t stream) {
  size_t span;
  if (!extent(pitch, width, height, &span)) return cudaErrorInvalidPitchValue;
  return device_side_ok(s, ptr, span, stream) ? cudaSuccess : cudaErrorInvalidValue;
}

int32_t memcpy_htod(SessionContext& s, Request& req, proto::Writer&) {
  auto dst = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  bool sync = req.args.get<uint8_t>();
  req.args.expect_end();
  size_t n = req.payload_left();
  if (!s.owns(dst, n)) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  return pipeline_in(
      s, req, n, 1, stream, sync,
      [&](void* buf, size_t off, size_t len) {
        return s.backend().memcpy_async(at(dst + off), buf, len, cudaMemcpyHostToDevice, stream);
      },
      at(dst));
}

// A device-to-host copy the client does not wait for: queued on the GPU
// whole, into one staging buffer, so that it counts as started only once all
// of it is queued; its data follows as the GPU is done with each block (a
// large one's first block goes out while the GPU still copies the rest).
int32_t queued_download(SessionContext& s, Request& req, uint64_t src, size_t n, uint64_t stream) {
  constexpr size_t kBlock = 4u << 20;
  if (n > proto::kMaxQueuedDownload) return cudaErrorInvalidValue;
  StagingPool& pool = lane_staging(s, req);
  StagingPool::Slot* slot;
  if (int32_t e = pool.acquire(0, n, &slot)) return e;
  auto* buffer = static_cast<uint8_t*>(slot->buffer);
  // One event a block but the last, whose end the slot's event marks.
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<Handle> ends(blocks > 1 ? blocks - 1 : 0);
  int32_t err = cudaSuccess;
  for (size_t i = 0; i < blocks && !err; ++i) {
    const size_t off = i * kBlock;
    err = s.backend().memcpy_async(buffer + off, at(src + off), std::min(kBlock, n - off), cudaMemcpyDeviceToHost,
                                   stream);
    if (!err && i < ends.size() && !(err = s.backend().event_create(&ends[i], cudaEventDisableTiming)))
      err = s.backend().event_record(ends[i], stream);
  }
  if (!err) err = pool.release_after(*slot, stream);
  auto release = [&] {
    for (Handle e : ends)
      if (e) s.backend().event_destroy(e);
  };
  if (err) {
    release();
    return err;
  }
  req.queued();
  begin_streamed_reply(req.lane(), n);
  std::vector<uint8_t> zeros;
  for (size_t i = 0; i < blocks; ++i) {
    const size_t off = i * kBlock, len = std::min(kBlock, n - off);
    if (!err) err = s.backend().event_synchronize(i < ends.size() ? ends[i] : slot->event);
    const void* data = buffer + off;
    if (err) {
      // The reply promised n bytes: after a failure filler, and the final
      // status tells the client they are not valid.
      zeros.resize(len);
      data = zeros.data();
    }
    iovec v{const_cast<void*>(data), len};
    req.connection().send({&v, 1}, true);
  }
  slot->in_flight = false;
  release();
  iovec tail{&err, sizeof err};
  req.connection().send({&tail, 1});
  return cudaSuccess;
}

int32_t memcpy_dtoh(SessionContext& s, Request& req, proto::Writer&) {
  auto src = req.args.get<uint64_t>();
  auto n = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.owns(src, n)) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  if (req.is_async()) return queued_download(s, req, src, n, stream);
  begin_streamed_reply(req.lane(), n);
  pipeline_out(
      s, req, n, 1, stream,
      [&](void* buf, size_t off, size_t len) {
        return s.backend().memcpy_async(buf, at(src + off), len, cudaMemcpyDeviceToHost, stream);
      },
      at(src));
  return cudaSuccess;
}

int32_t memcpy_dtod(SessionContext& s, Request& req, proto::Writer&) {
  auto dst = req.args.get<uint64_t>();
  auto src = req.args.get<uint64_t>();
  auto n = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  bool sync = req.args.get<uint8_t>();
  req.args.expect_end();
  if (!device_side_ok(s, dst, n, stream) || !device_side_ok(s, src, n, stream)) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  if (int32_t e = s.backend().memcpy_async(at(dst), at(src), n, cudaMemcpyDeviceToDevice, stream)) return e;
  return sync ? s.backend().stream_synchronize(stream) : cudaSuccess;
}

int32_t memcpy2d_htod(SessionContext& s, Request& req, proto::Writer&) {
  auto dst = req.args.get<uint64_t>();
  auto dpitch = req.args.get<uint64_t>();
  auto width = req.args.get<uint64_t>();
  auto height = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  bool sync = req.args.get<uint8_t>();
  req.args.expect_end();
  size_t bytes;
  if (int32_t e = check_region(s, dst, dpitch, width, height, &bytes)) return e;
  if (bytes != req.payload_left() || width > kMaxStagedRow) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  return pipeline_in(s, req, bytes, width, stream, sync, [&](void* buf, size_t off, size_t len) {
    return s.backend().memcpy2d_async(at(dst + off / width * dpitch), dpitch, buf, width, width, len / width,
                                      cudaMemcpyHostToDevice, stream);
  });
}

int32_t memcpy2d_dtoh(SessionContext& s, Request& req, proto::Writer&) {
  auto src = req.args.get<uint64_t>();
  auto spitch = req.args.get<uint64_t>();
  auto width = req.args.get<uint64_t>();
  auto height = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  size_t bytes;
  if (int32_t e = check_region(s, src, spitch, width, height, &bytes)) return e;
  if (width > kMaxStagedRow) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  begin_streamed_reply(req.lane(), bytes);
  pipeline_out(s, req, bytes, width, stream, [&](void* buf, size_t off, size_t len) {
    return s.backend().memcpy2d_async(buf, width, at(src + off / width * spitch), spitch, width, len / width,
                                      cudaMemcpyDeviceToHost, stream);
  });
  return cudaSuccess;
}

int32_t memcpy2d_dtod(SessionContext& s, Request& req, proto::Writer&) {
  auto dst = req.args.get<uint64_t>();
  auto dpitch = req.args.get<uint64_t>();
  auto src = req.args.get<uint64_t>();
  auto spitch = req.args.get<uint64_t>();
  auto width = req.args.get<uint64_t>();
  auto height = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  bool sync = req.args.get<uint8_t>();
  req.args.expect_end();
  if (int32_t e = check_device_region(s, dst, dpitch, width, height, stream)) return e;
  if (int32_t e = check_device_region(s, src, spitch, width, height, stream)) return e;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  if (int32_t e = s.backend().memcpy2d_async(at(dst), dpitch, at(src), spitch, width, height,
                                             cudaMemcpyDeviceToDevice, stream))
    return e;
  return sync ? s.backend().stream_synchronize(stream) : cudaSuccess;
}

int32_t memset_1d(SessionContext& s, Request& req, proto::Writer&) {
  auto ptr = req.args.get<uint64_t>();
  auto value = req.args.get<int32_t>();
  auto n = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!device_side_ok(s, ptr, n, stream)) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  return s.backend().memset_async(ptr, value, n, stream);
}

int32_t memset_2d(SessionContext& s, Request& req, proto::Writer&) {
  auto ptr = req.args.get<uint64_t>();
  auto pitch = req.args.get<uint64_t>();
  auto value = req.args.get<int32_t>();
  auto width = req.args.get<uint64_t>();
  auto height = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  if (int32_t e = check_device_region(s, ptr, pitch, width, height, stream)) return e;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  return s.backend().memset2d_async(ptr, pitch, value, width, height, stream);
}

}  // namespace

void register_copy_handlers(Dispatcher& d) {
  d.add(proto::kOpMemcpyHtoD, memcpy_htod);
  d.add(proto::kOpMemcpyDtoH, memcpy_dtoh);
  d.add(proto::kOpMemcpyDtoD, memcpy_dtod);
  d.add(proto::kOpMemcpy2DHtoD, memcpy2d_htod);
  d.add(proto::kOpMemcpy2DDtoH, memcpy2d_dtoh);
  d.add(proto::kOpMemcpy2DDtoD, memcpy2d_dtod);
  d.add(proto::kOpMemset, memset_1d);
  d.add(proto::kOpMemset2D, memset_2d);
}

}  // namespace rgpu::server
