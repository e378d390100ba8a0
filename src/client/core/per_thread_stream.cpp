#include "client/core/per_thread_stream.hpp"

namespace rgpu::client {
namespace {
thread_local int t_depth = 0;
}

PerThreadStreamScope::PerThreadStreamScope() { ++t_depth; }
PerThreadStreamScope::~PerThreadStreamScope() { --t_depth; }

cudaStream_t effective_stream(cudaStream_t s) {
  return (s == nullptr && t_depth > 0) ? cudaStreamPerThread : s;
}

}  // namespace rgpu::client
