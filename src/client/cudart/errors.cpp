// Error reporting. Names come from the CUDA headers (generated); the
// descriptions are the server's runtime's own, so programs print what they
// print locally.
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/cudart/generated/error_names.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

extern "C" cudaError_t cudaGetLastError() { return take_last_error(); }

extern "C" cudaError_t cudaPeekAtLastError() { return peek_last_error(); }

extern "C" const char* cudaGetErrorName(cudaError_t error) {
  const char* name = error_name(error);
  return name ? name : "unrecognized error code";
}

extern "C" const char* cudaGetErrorString(cudaError_t error) {
  static std::mutex mutex;
  // Strings handed out must live for the whole program.
  static auto* cache = new std::unordered_map<int, std::string>;
  std::lock_guard lock(mutex);
  if (auto it = cache->find(error); it != cache->end()) return it->second.c_str();
  std::string text;
  Call call(proto::kOpGetErrorString);
  call.quiet();
  if (Runtime::get().ensure_init() == cudaSuccess && call.to_current_device() == cudaSuccess) {
    call.args().put<int32_t>(error);
    if (call.run() == cudaSuccess) text = call.reply().get_string();
  }
  if (text.empty()) {
    // No server to ask: fall back to the name rather than fail.
    const char* name = error_name(error);
    if (!name) return "unrecognized error code";
    text = name;
  } 
  return cache->emplace(error, std::move(text)).first->second.c_str();
}
