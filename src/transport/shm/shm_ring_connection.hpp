// The shm transport's connection: frames travel through two byte rings in
// memory shared by client and worker; the Unix socket beside them carries
// descriptors (memory to share) and tells when the peer is gone.
#pragma once
#include <atomic>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "transport/shm/byte_ring.hpp"
#include "transport/shm/shared_memory.hpp"
#include "transport/transport.hpp"

namespace rgpu::transport {

class ShmRingConnection final : public Connection {
 public:
  // Client side: makes the rings and offers them to the server over the
  // connected socket `fd`, with the session's join secret when it joins one.
  static std::unique_ptr<Connection> offer(int fd, std::span<const uint8_t> join_secret = {});
  // Server side: the client's offer is taken at first use. A connection to
  // a session's join point must offer `join_secret` with its rings: it is
  // checked before anything the client sent is mapped.
  explicit ShmRingConnection(int fd, std::vector<uint8_t> join_secret = {})
      : fd_(fd), join_secret_(std::move(join_secret)) {}
  ~ShmRingConnection() override;
  ShmRingConnection(const ShmRingConnection&) = delete;
  ShmRingConnection& operator=(const ShmRingConnection&) = delete;

  void send(std::span<const iovec> parts, bool more = false) override;
  void recv(void* dst, size_t len) override;
  bool wait_readable(int timeout_ms) override;
  void shutdown() override;
  int native_handle() const override { return fd_; }
  std::string peer() const override { return "local"; }
  void send_with_fd(std::span<const iovec> parts, int fd) override;
  int take_fd() override;
  bool passes_descriptors() const override { return true; }

 private:
  // Maps the shared rings; `client` says which ring is whose.
  void attach(SharedMemory mem, bool client);
  // Server side: receives the client's rings, waiting up to timeout_ms.
  void accept_offer(int timeout_ms);
  // Server side: reads the join secret that follows the offer's tag and
  // compares it (constant time) with ours; throws TransportError if it differs.
  void check_join_secret(std::chrono::steady_clock::time_point deadline);
  void check_peer_alive();

  int fd_;
  const std::vector<uint8_t> join_secret_;
  SharedMemory mem_;
  std::unique_ptr<ByteRing> in_, out_;
  std::deque<int> fds_;
  std::atomic<bool> attached_{false};  // in_ and out_ are set
  std::atomic<bool> shut_{false};
};

}  // namespace rgpu::transport
