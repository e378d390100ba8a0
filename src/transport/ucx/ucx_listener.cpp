#include "transport/ucx/ucx_listener.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "transport/ucx/ucx_connection.hpp"

namespace rgpu::transport::ucx {
namespace {

// An accepted connection whose worker addresses are swapped at its first
// use, in the thread that serves it: accept() itself must not wait on a peer
// (a silent one would hold up every connection accepted after it), and the
// swap then falls under the server's hello deadline, which shuts the socket
// down (native_handle) to end it.
class DeferredConnection final : public Connection {
 public:
  explicit DeferredConnection(std::unique_ptr<Connection> side)
      : fd_(::dup(side->native_handle())), peer_(side->peer()), side_(std::move(side)) {}
  ~DeferredConnection() override {
    ucx_.reset();
    side_.reset();
    if (fd_ >= 0) ::close(fd_);
  }

  void send(std::span<const iovec> parts, bool more) override { connected().send(parts, more); }
  void recv(void* dst, size_t len) override { connected().recv(dst, len); }
  bool wait_readable(int timeout_ms) override { return connected().wait_readable(timeout_ms); }
  // Works before and after the swap: the side channel's socket is shared.
  void shutdown() override { ::shutdown(fd_, SHUT_RDWR); }
  int native_handle() const override { return fd_; }
  std::string peer() const override { return peer_; }
  void send_with_fd(std::span<const iovec> parts, int fd) override { connected().send_with_fd(parts, fd); }
  int take_fd() override { return -1; }
  bool passes_descriptors() const override { return false; }
  std::unique_ptr<Listener> listen_beside() const override { return connected().listen_beside(); }
  bool zero_copy(MemoryKind kind) const override { return connected().zero_copy(kind); }
  size_t recv_zero_copy(void* dst, size_t len) override { return connected().recv_zero_copy(dst, len); }
  bool send_zero_copy(const void* src, size_t len) override { return connected().send_zero_copy(src, len); }

 private:
  UcxConnection& connected() const {
    std::lock_guard lock(mutex_);
    if (!ucx_) {
      if (!side_) throw TransportError("the UCX connection failed to start");
      ucx_ = std::make_unique<UcxConnection>(std::move(side_));
    }
    return *ucx_;
  }

  const int fd_;  // a duplicate of the side channel's socket
  const std::string peer_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<Connection> side_;  // until the swap
  mutable std::unique_ptr<UcxConnection> ucx_;
};

}  // namespace

std::unique_ptr<Connection> UcxListener::accept() { return std::make_unique<DeferredConnection>(tcp_->accept()); }

}  // namespace rgpu::transport::ucx
