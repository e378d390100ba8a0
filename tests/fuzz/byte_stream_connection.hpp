// A transport connection whose peer is a fixed byte string (a fuzz input):
// recv hands out its bytes and fails at its end as a closed peer would;
// what is sent is counted and dropped.
#pragma once
#include <cstdint>
#include <span>

#include "transport/transport.hpp"

namespace rgpu::fuzz {

class ByteStreamConnection final : public transport::Connection {
 public:
  explicit ByteStreamConnection(std::span<const uint8_t> input) : input_(input) {}

  void send(std::span<const iovec> parts, bool more = false) override;
  void recv(void* dst, size_t len) override;
  bool wait_readable(int timeout_ms) override { return at_ < input_.size(); }
  void shutdown() override {}
  int native_handle() const override { return -1; }
  std::string peer() const override { return "fuzz input"; }
  void send_with_fd(std::span<const iovec> parts, int fd) override;
  int take_fd() override { return -1; }
  bool passes_descriptors() const override { return false; }

  size_t bytes_left() const { return input_.size() - at_; }
  uint64_t bytes_sent() const { return sent_; }

 private:
  std::span<const uint8_t> input_;
  size_t at_ = 0;
  uint64_t sent_ = 0;
};

}  // namespace rgpu::fuzz
