#include "server/backend/host/host_nccl_reduce.hpp"

#include <nccl.h>

#include <algorithm>
#include <cstring>

namespace rgpu::server {
namespace {

// Half and bfloat16 values as their bits, computed in float.
struct Half {
  uint16_t bits;
};
struct Bf16 {
  uint16_t bits;
};

float to_float(Half h) {
  uint32_t sign = (h.bits & 0x8000u) << 16, exp = (h.bits >> 10) & 0x1f, man = h.bits & 0x3ffu, f;
  if (exp == 0) {
    if (man == 0) {
      f = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) {
        man <<= 1;
        --exp;
      }
      f = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    f = sign | 0x7f800000u | (man << 13);
  } else {
    f = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float out;
  std::memcpy(&out, &f, 4);
  return out;
}

Half to_half(float v) {
  uint32_t f;
  std::memcpy(&f, &v, 4);
  uint32_t sign = (f >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((f >> 23) & 0xff) - 127 + 15;
  uint32_t man = f & 0x7fffffu;
  if (((f >> 23) & 0xff) == 0xff) return {static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0))};
  if (exp >= 31) return {static_cast<uint16_t>(sign | 0x7c00u)};
  if (exp <= 0) {
    if (exp < -10) return {static_cast<uint16_t>(sign)};
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return {static_cast<uint16_t>(sign | half)};
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13), rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;
  return {static_cast<uint16_t>(half)};
}

float to_float(Bf16 b) {
  uint32_t f = uint32_t{b.bits} << 16;
  float out;
  std::memcpy(&out, &f, 4);
  return out;
}

Bf16 to_bf16(float v) {
  uint32_t f;
  std::memcpy(&f, &v, 4);
  if ((f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu)) return {static_cast<uint16_t>((f >> 16) | 0x40)};
  f += 0x7fffu + ((f >> 16) & 1);
  return {static_cast<uint16_t>(f >> 16)};
}

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
