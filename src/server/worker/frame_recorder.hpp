// RGPU_RECORD_FRAMES=DIR: a worker writes each frame it receives (header,
// arguments, payload) to DIR/<kind>/<SHA-256 of the frame>, the seed corpora
// of the fuzz targets (tests/fuzz). Identical frames land in one file.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::server {

// A connection that keeps what it receives until frame_done files it.
class FrameRecorder final : public transport::Connection {
 public:
  // A recorder around `inner` when RGPU_RECORD_FRAMES is set, else null.
  static std::unique_ptr<FrameRecorder> from_env(transport::Connection& inner);

  // The bytes received since the last call are one frame of `kind`
  // ("handshake", "dispatcher"): written out, then forgotten.
  void frame_done(const char* kind);

  void send(std::span<const iovec> parts, bool more = false) override { inner_.send(parts, more); }
  void recv(void* dst, size_t len) override;
  bool wait_readable(int timeout_ms) override { return inner_.wait_readable(timeout_ms); }
  void shutdown() override { inner_.shutdown(); }
  int native_handle() const override { return inner_.native_handle(); }
  std::string peer() const override { return inner_.peer(); }
  void send_with_fd(std::span<const iovec> parts, int fd) override { inner_.send_with_fd(parts, fd); }
  int take_fd() override { return inner_.take_fd(); }
  bool passes_descriptors() const override { return inner_.passes_descriptors(); }
  std::unique_ptr<transport::Listener> listen_beside() const override { return inner_.listen_beside(); }

 private:
  FrameRecorder(transport::Connection& inner, std::string dir) : inner_(inner), dir_(std::move(dir)) {}

  transport::Connection& inner_;
  const std::string dir_;
  std::vector<uint8_t> frame_;
};

// `recorder` if there is one, else the connection it would wrap.
inline transport::Connection& recorded(const std::unique_ptr<FrameRecorder>& recorder, transport::Connection& conn) {
  return recorder ? *recorder : conn;
}

}  // namespace rgpu::server
