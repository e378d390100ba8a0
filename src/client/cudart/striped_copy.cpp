#include "client/cudart/striped_copy.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "client/core/call.hpp"
#include "client/cudart/parallel_copy.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

// A stripe smaller than this gains less than its round trip and its
// connection's staging cost.
constexpr size_t kMinStripeBytes = 8u << 20;
constexpr size_t kPage = 4096;
constexpr unsigned kDefaultStripes = 4;

cudaError_t copy_stripe(int device, uint64_t remote_stream, char* dst, const char* src, size_t n, bool to_device,
                        bool sync) {
  Call call(to_device ? proto::kOpMemcpyHtoD : proto::kOpMemcpyDtoH);
  int32_t remote_device;
  if (cudaError_t e = call.to_device(device, &remote_device)) return e;
  if (to_device) {
    call.args().put<uint64_t>(reinterpret_cast<uint64_t>(dst)).put<uint64_t>(remote_stream).put<uint8_t>(sync);
    iovec data{const_cast<char*>(src), n};
    return call.run({&data, 1});
  }
  call.args().put<uint64_t>(reinterpret_cast<uint64_t>(src)).put<uint64_t>(n).put<uint64_t>(remote_stream);
  return call.run_into(dst, n);
}

}  // namespace

unsigned tcp_stripes() {
  static const unsigned stripes = [] {
    const char* v = std::getenv("RGPU_TCP_STRIPES");
    long n = v && *v ? std::strtol(v, nullptr, 10) : kDefaultStripes;
    return static_cast<unsigned>(std::clamp<long>(n, 1, parallel_threads()));
  }();
  return stripes;
}

unsigned stripes_for(int device, size_t n) {
  // One TCP stream, encrypted or not, is what one core copies (and, with
  // TLS, encrypts); shm and ucx move a copy at once.
  const std::string& transport = Runtime::get().device(device)->session->transport_name();
  if (transport != "tcp" && transport != "tls") return 1;
  return static_cast<unsigned>(std::clamp<size_t>(n / kMinStripeBytes, 1, tcp_stripes()));
}

bool striped_copy(int device, uint64_t remote_stream, void* dst, const void* src, size_t n, bool to_device,
                  bool sync, cudaError_t* status) {
  if (remote_stream == reinterpret_cast<uint64_t>(cudaStreamPerThread)) return false;
  const unsigned stripes = stripes_for(device, n);
  if (stripes < 2) return false;
  const size_t stripe = (n / stripes + kPage - 1) / kPage * kPage;
  std::atomic<int> first_error{cudaSuccess};
  auto move = [&](unsigned i) {
    size_t off = std::min(n, i * stripe);
    cudaError_t e = copy_stripe(device, remote_stream, static_cast<char*>(dst) + off,
                                static_cast<const char*>(src) + off, std::min(stripe, n - off), to_device, sync);
    int expected = cudaSuccess;
    if (e) first_error.compare_exchange_strong(expected, e);
  };
  if (!run_in_parallel(stripes, move)) return false;
  *status = static_cast<cudaError_t>(first_error.load());
  return true;
}

}  // namespace rgpu::client
