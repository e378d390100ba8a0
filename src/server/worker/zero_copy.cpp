#include "server/worker/zero_copy.hpp"

#include <mutex>
#include <string_view>

#include "common/log.hpp"

namespace rgpu::server {
namespace {

// Says once per worker which way a zero-copy transport's copies go (the GPU
// suite's report shows it).
void say_once(const char* how) {
  static std::once_flag once;
  std::call_once(once, [&] { RGPU_LOG(info, "bulk copies over this transport: %s", how); });
}

}  // namespace

bool zero_copy_enabled(const char* setting) { return setting && std::string_view(setting) == "1"; }

bool zero_copy_applies(bool enabled, const transport::Connection& c, Backend& backend, Handle stream) {
  if (!c.zero_copy(transport::MemoryKind::host)) return false;
  if (!enabled) {
    say_once("staged (RGPU_UCX_ZERO_COPY is not 1)");
    return false;
  }
  if (!c.zero_copy(backend.device_memory())) {
    say_once("staged (the transport does not reach this backend's device memory: UCX without CUDA support)");
    return false;
  }
  say_once("zero copy, in place in device memory");
  CaptureInfo info;
  return backend.graphs().capture_info(stream, &info) == cudaSuccess && info.status == cudaStreamCaptureStatusNone;
}

}  // namespace rgpu::server
