#include "server/backend/host/host_nccl_reduce.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>

namespace rgpu::server {
namespace {

// Half and bfloat16 values computed in float, converted by CUDA's own host
// functions (round to nearest even, as NCCL's kernels).
using Half = __half;
using Bf16 = __nv_bfloat16;

float to_float(Half h) { return __half2float(h); }
float to_float(Bf16 b) { return __bfloat162float(b); }
Half to_half(float v) { return __float2half_rn(v); }
Bf16 to_bf16(float v) { return __float2bfloat16_rn(v); }

template <typename T>
T combine(T a, T b, int32_t op) {
  switch (op) {
    case ncclProd: return static_cast<T>(a * b);
    case ncclMax: return std::max(a, b);
    case ncclMin: return std::min(a, b);
    default: return static_cast<T>(a + b);  // ncclSum, ncclAvg
  }
}

template <typename T>
void reduce_as(void* acc, const void* in, size_t count, int32_t op) {
  for (size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, static_cast<char*>(acc) + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const char*>(in) + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, Half>) {
      a = to_half(combine(to_float(a), to_float(b), op));
    } else if constexpr (std::is_same_v<T, Bf16>) {
      a = to_bf16(combine(to_float(a), to_float(b), op));
    } else {
      a = combine(a, b, op);
    }
    std::memcpy(static_cast<char*>(acc) + i * sizeof(T), &a, sizeof(T));
  }
}

template <typename T>
void scale_as(void* buf, size_t count, double factor) {
  for (size_t i = 0; i < count; ++i) {
    T a;
    std::memcpy(&a, static_cast<char*>(buf) + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, Half>) {
      a = to_half(static_cast<float>(to_float(a) * factor));
    } else if constexpr (std::is_same_v<T, Bf16>) {
      a = to_bf16(static_cast<float>(to_float(a) * factor));
    } else {
      a = static_cast<T>(a * factor);
    }
    std::memcpy(static_cast<char*>(buf) + i * sizeof(T), &a, sizeof(T));
  }
}

// Calls f with a value of the datatype's C type (for its type only).
template <typename F>
void with_type(int32_t datatype, F&& f) {
  switch (datatype) {
    case ncclInt8: f(int8_t{}); break;
    case ncclUint8: f(uint8_t{}); break;
    case ncclInt32: f(int32_t{}); break;
    case ncclUint32: f(uint32_t{}); break;
    case ncclInt64: f(int64_t{}); break;
    case ncclUint64: f(uint64_t{}); break;
    case ncclFloat16: f(Half{}); break;
    case ncclFloat32: f(float{}); break;
    case ncclFloat64: f(double{}); break;
    case ncclBfloat16: f(Bf16{}); break;
    default: break;
  }
}

}  // namespace

size_t host_nccl_type_size(int32_t datatype) {
  size_t size = 0;
  with_type(datatype, [&](auto v) { size = sizeof v; });
  return size;
}

void host_nccl_reduce(void* acc, const void* in, size_t count, int32_t datatype, int32_t op) {
  with_type(datatype, [&](auto v) { reduce_as<decltype(v)>(acc, in, count, op); });
}

void host_nccl_scale(void* buf, size_t count, int32_t datatype, double factor) {
  with_type(datatype, [&](auto v) { scale_as<decltype(v)>(buf, count, factor); });
}

double host_nccl_value(const void* p, int32_t datatype) {
  double out = 0;
  with_type(datatype, [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::is_same_v<decltype(v), Half> || std::is_same_v<decltype(v), Bf16>) {
      out = to_float(v);
    } else {
      out = static_cast<double>(v);
    }
  });
  return out;
}

}  // namespace rgpu::server
