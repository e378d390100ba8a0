#include "client/core/call.hpp"

#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

#include "client/core/handles.hpp"
#include "client/core/per_thread_stream.hpp"
#include "common/log.hpp"
#include "protocol/op_names.hpp"

namespace rgpu::client {
namespace {

bool tracing() {
  static const bool on = [] {
    const char* v = std::getenv("RGPU_TRACE");
    return v && *v && *v != '0';
  }();
  return on;
}

// RGPU_TRACE=1: every forwarded call, its result and its time, on stderr.
std::atomic<void (*)(uint16_t, bool)> g_before_device_work{nullptr};

template <typename F>
cudaError_t traced(uint16_t op, bool async, size_t arg_bytes, F&& f) {
  if (auto hook = g_before_device_work.load(std::memory_order_acquire)) hook(op, async);
  if (!tracing()) return f();
  auto t0 = std::chrono::steady_clock::now();
  cudaError_t e = f();
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  // The thread: which calls hold up an application's own thread, and which
  // come from its helpers (a framework's watchdog).
  log::write(log::Level::info, "trace %s%s args=%zuB -> %d (%.1f us) thread %d", proto::op_name(op),
             async ? " [async]" : "", arg_bytes, static_cast<int>(e), us, static_cast<int>(gettid()));
  return e;
}

}  // namespace

void set_before_device_work(void (*hook)(uint16_t, bool)) { g_before_device_work.store(hook, std::memory_order_release); }

HandleRegistry<cudaStream_t>& streams() {
  static auto* r = new HandleRegistry<cudaStream_t>;
  return *r;
}

HandleRegistry<cudaEvent_t>& events() {
  static auto* r = new HandleRegistry<cudaEvent_t>;
  return *r;
}

HandleRegistry<cudaMemPool_t>& mem_pools() {
  static auto* r = new HandleRegistry<cudaMemPool_t>;
  return *r;
}

cudaError_t Call::route(int index) {
  Runtime& rt = Runtime::get();
  if (cudaError_t e = rt.ensure_init()) return e;
  dev_ = rt.device(index);
  if (!dev_) return cudaErrorInvalidDevice;
  index_ = index;
  // Calls on the thread's current device run in its current context there.
  uint16_t green = index == Runtime::current_device() ? Runtime::current_green_slot() : 0;
  wire_device_ = proto::header_device(static_cast<uint16_t>(dev_->remote), green);
  return cudaSuccess;
}

cudaError_t Call::to_current_device() { return route(Runtime::current_device()); }

cudaError_t Call::to_device(int device, int32_t* remote_ordinal) {
  if (cudaError_t e = route(device)) return e;
  *remote_ordinal = dev_->remote;
  return cudaSuccess;
}

cudaError_t Call::to_stream(cudaStream_t stream, uint64_t* remote) {
  stream = effective_stream(stream);
  if (is_default_stream(stream)) {
    *remote = reinterpret_cast<uint64_t>(stream);
    return to_current_device();
  }
  RemoteObject o;
  if (!streams().find(stream, &o)) return cudaErrorInvalidResourceHandle;
  *remote = o.remote;
  return route(o.device);
}

cudaError_t Call::to_event(cudaEvent_t event, uint64_t* remote) {
  RemoteObject o;
  if (!events().find(event, &o)) return cudaErrorInvalidResourceHandle;
  *remote = o.remote;
  return route(o.device);
}

cudaError_t Call::run(std::span<const iovec> payload) { return run_numbered(payload, nullptr); }

cudaError_t Call::run_into(void* dst, size_t n) { return run_into_numbered(dst, n, nullptr); }

cudaError_t Call::run_numbered(std::span<const iovec> payload, uint64_t* used) {
  cudaError_t e = traced(op_, false, args_.size(), [&] {
    return dev_->session->call(op_, wire_device_, args_.bytes(), payload, reply_buf_, report_deferred_, used);
  });
  reply_ = proto::Reader(reply_buf_);
  return e;
}

cudaError_t Call::run_into_numbered(void* dst, size_t n, uint64_t* used) {
  cudaError_t e = traced(op_, false, args_.size(), [&] {
    return dev_->session->call_into(op_, wire_device_, args_.bytes(), dst, n, reply_buf_, used);
  });
  reply_ = proto::Reader(reply_buf_);
  return e;
}

cudaError_t Call::run_synchronizing(uint64_t stream) {
  if (cudaError_t e; dev_->session->synchronized_already(wire_device_, stream, &e)) return e;
  uint64_t seq = 0;
  cudaError_t e = run_numbered({}, &seq);
  if (e == cudaSuccess) dev_->session->mark_idle(seq, wire_device_, stream);
  return e;
}

cudaError_t Call::run_into_synchronizing(void* dst, size_t n, uint64_t stream) {
  uint64_t seq = 0;
  cudaError_t e = run_into_numbered(dst, n, &seq);
  if (e == cudaSuccess) dev_->session->mark_idle(seq, wire_device_, stream);
  return e;
}

bool descriptor_open(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) != -1; }

cudaError_t Call::descriptors_travel(const char* api) const {
  if (dev_->session->shares_memory()) return cudaSuccess;
  RGPU_LOG(warn, "%s: file descriptors need the shm transport (client and server on one host); this session uses %s",
           api, dev_->session->transport_name().c_str());
  return cudaErrorNotSupported;
}

cudaError_t Call::run_with_fd(int fd) {
  if (!descriptor_open(fd)) return cudaErrorInvalidValue;
  cudaError_t e = traced(op_, false, args_.size(), [&] {
    return dev_->session->call_with_fd(op_, wire_device_, args_.bytes(), fd, reply_buf_);
  });
  reply_ = proto::Reader(reply_buf_);
  return e;
}

cudaError_t Call::run_taking_fd(int* fd) {
  cudaError_t e = traced(op_, false, args_.size(), [&] {
    return dev_->session->call_taking_fd(op_, wire_device_, args_.bytes(), fd, reply_buf_);
  });
  reply_ = proto::Reader(reply_buf_);
  return e;
}

cudaError_t Call::post_download(void* dst, size_t n, uint64_t stream) {
  return traced(op_, true, args_.size(), [&] {
    return dev_->session->post_download(op_, wire_device_, args_.bytes(), dst, n, stream);
  });
}

cudaError_t Call::post(std::span<const iovec> payload) {
  return traced(op_, true, args_.size(),
                [&] { return dev_->session->post(op_, wire_device_, args_.bytes(), payload); });
}

}  // namespace rgpu::client
