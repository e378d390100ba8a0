// Encoding of frame arguments: fixed-size little-endian values copied as they
// are laid out in memory (both ends are x86-64 builds of the same CUDA
// headers), and length-prefixed byte strings. Reader never reads past its
// buffer: a short or inconsistent message throws DecodeError.
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rgpu::proto {

struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Writer {
 public:
  template <typename T>
  Writer& put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof value);
    return *this;
  }
  Writer& put_bytes(const void* data, size_t len) {
    put<uint32_t>(static_cast<uint32_t>(len));
    append(data, len);
    return *this;
  }
  Writer& put_string(std::string_view s) { return put_bytes(s.data(), s.size()); }
  // Bytes encoded elsewhere (a library front-end's arguments), as they are.
  Writer& put_raw(const void* data, size_t len) {
    append(data, len);
    return *this;
  }

  const std::vector<uint8_t>& bytes() const { return buf_; }
  size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

 private:
  void append(const void* p, size_t n) {
    if (n == 0) return;
    size_t at = buf_.size();
    buf_.resize(at + n);
    std::memcpy(buf_.data() + at, p, n);
  }
  std::vector<uint8_t> buf_;
};

class Reader {
 public:
  Reader() = default;
  explicit Reader(std::span<const uint8_t> data) : p_(data.data()), end_(data.data() + data.size()) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    // For enums from a trusted peer (the server's replies); a worker
    // decodes the client's through wire_enum.hpp.
    if constexpr (std::is_enum_v<T>) return static_cast<T>(get<std::underlying_type_t<T>>());
    T value;
    std::memcpy(&value, take(sizeof value), sizeof value);
    return value;
  }
  std::span<const uint8_t> get_bytes() {
    uint32_t len = get<uint32_t>();
    return {take(len), len};
  }
  std::string get_string() {
    auto b = get_bytes();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  // Everything not read yet, taken.
  std::span<const uint8_t> rest() {
    size_t n = remaining();
    return {take(n), n};
  }
  // Handlers call this after decoding so trailing garbage is an error too.
  void expect_end() const {
    if (p_ != end_) throw DecodeError("trailing bytes in message");
  }

 private:
  const uint8_t* take(size_t n) {
    if (n > remaining()) throw DecodeError("message shorter than its arguments");
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
};

}  // namespace rgpu::proto
