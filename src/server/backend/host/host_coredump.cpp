// TEST BACKEND part: see host_coredump.hpp.
#include "server/backend/host/host_coredump.hpp"

#include <algorithm>
#include <cstring>

namespace rgpu::server {
namespace {

constexpr size_t kMaxPath = 1024;  // 1023 characters and the NUL

bool is_path(CoredumpSetting a) { return a == CU_COREDUMP_FILE || a == CU_COREDUMP_PIPE; }

// Bytes a value of the attribute takes (a path: its buffer's largest size).
size_t value_size(CoredumpSetting a) {
  if (is_path(a)) return kMaxPath;
  return a == CU_COREDUMP_GENERATION_FLAGS ? sizeof(int) : sizeof(bool);
}

std::vector<uint8_t> bytes_of(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  return {b, b + n};
}

std::vector<uint8_t> default_value(CoredumpSetting a) {
  // Where CUDA would write: core.cuda.HOSTNAME.PID; these names stand in for it.
  if (a == CU_COREDUMP_FILE) return bytes_of("core.cuda.host-test", sizeof "core.cuda.host-test");
  if (a == CU_COREDUMP_PIPE) return bytes_of("corepipe.cuda.host-test", sizeof "corepipe.cuda.host-test");
  if (a == CU_COREDUMP_GENERATION_FLAGS) {
    int flags = CU_COREDUMP_DEFAULT_FLAGS;
    return bytes_of(&flags, sizeof flags);
  }
  bool on = a == CU_COREDUMP_TRIGGER_HOST;  // the only one that defaults to true
  return bytes_of(&on, sizeof on);
}

}  // namespace

std::vector<uint8_t> HostCoredump::current(int device, CoredumpSetting attrib) const {
  if (device >= 0) {
    auto c = contexts_.find(device);
    if (c != contexts_.end()) {
      auto v = c->second.find(attrib);
      if (v != c->second.end()) return v->second;
    }
  }
  auto g = global_.find(attrib);
  return g != global_.end() ? g->second : default_value(attrib);
}

int32_t HostCoredump::get(int device, CoredumpSetting attrib, void* value, size_t* size) {
  if (attrib < CU_COREDUMP_ENABLE_ON_EXCEPTION || attrib >= CU_COREDUMP_MAX) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(mutex_);
  auto v = current(device, attrib);
  if (!value) {
    *size = is_path(attrib) ? v.size() : value_size(attrib);
    return CUDA_SUCCESS;
  }
  if (*size < v.size()) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(value, v.data(), v.size());
  return CUDA_SUCCESS;
}

int32_t HostCoredump::set(int device, CoredumpSetting attrib, const void* value, size_t* size) {
  if (attrib < CU_COREDUMP_ENABLE_ON_EXCEPTION || attrib >= CU_COREDUMP_MAX) return CUDA_ERROR_INVALID_VALUE;
  // The pipe is one per process: never a context's own.
  if (device >= 0 && (attrib == CU_COREDUMP_ENABLE_USER_TRIGGER || attrib == CU_COREDUMP_PIPE))
    return CUDA_ERROR_NOT_PERMITTED;
  if (!value) {
    *size = value_size(attrib);
    return CUDA_SUCCESS;
  }
  std::vector<uint8_t> v;
  if (is_path(attrib)) {
    auto* s = static_cast<const char*>(value);
    size_t n = strnlen(s, std::min(*size, kMaxPath));
    if (n == std::min(*size, kMaxPath)) return CUDA_ERROR_INVALID_VALUE;  // no NUL: too long
    v = bytes_of(s, n + 1);
  } else {
    if (*size != value_size(attrib)) return CUDA_ERROR_INVALID_VALUE;
    v = bytes_of(value, *size);
  }
  std::lock_guard lock(mutex_);
  (device >= 0 ? contexts_[device] : global_)[attrib] = std::move(v);
  return CUDA_SUCCESS;
}

}  // namespace rgpu::server
