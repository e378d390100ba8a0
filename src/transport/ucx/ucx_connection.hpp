// A connection over UCP. Two processes meet on a TCP socket (the side
// channel), swap their workers' addresses on it and each opens an endpoint
// to the other's worker, so UCX may use every transport it has between
// them (shared memory, InfiniBand, RoCE, TCP) and a connection can be handed
// from the daemon to a worker process like a tcp one (the socket travels).
// The socket then stays quiet: it marks the connection's life (a peer that
// dies closes it) and is its native handle.
//
// The byte stream travels as tagged messages. Small pieces are gathered and
// sent as one message; a large piece is not copied: its memory is
// registered and the receiver reads the parts it asks for straight into the
// destination it gives (a remote read, RDMA where the fabric has it), then
// acknowledges, and only then does send() return.
#pragma once
#include <ucp/api/ucp.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::transport::ucx {

class UcxConnection final : public Connection {
 public:
  // Swaps worker addresses over `side_channel` (either end may go first).
  explicit UcxConnection(std::unique_ptr<Connection> side_channel);
  ~UcxConnection() override;
  UcxConnection(const UcxConnection&) = delete;
  UcxConnection& operator=(const UcxConnection&) = delete;

  void send(std::span<const iovec> parts, bool more = false) override;
  void recv(void* dst, size_t len) override;
  bool wait_readable(int timeout_ms) override;
  void shutdown() override;
  int native_handle() const override { return side_->native_handle(); }
  std::string peer() const override { return side_->peer(); }
  void send_with_fd(std::span<const iovec> parts, int fd) override;
  int take_fd() override { return -1; }
  bool passes_descriptors() const override { return false; }
  std::unique_ptr<Listener> listen_beside() const override;
  // Host memory always; GPU memory where UCX knows it (ucx_context.hpp).
  bool zero_copy(MemoryKind kind) const override;
  size_t recv_zero_copy(void* dst, size_t len) override;
  bool send_zero_copy(const void* src, size_t len) override;

 private:
  // A large piece the peer offered, read from as recv() asks.
  struct Offer {
    uint64_t address = 0;
    uint64_t length = 0;
    uint64_t taken = 0;
    ucp_rkey_h rkey = nullptr;
  };

  void exchange_addresses();
  void greet();
  void flush_gathered();
  void send_message(ucp_tag_t tag, const void* data, size_t len);
  bool send_registered(const iovec& piece);
  void next_message();
  void take_offer(const std::vector<char>& descriptor);
  // Reads len bytes of the offer into dst: start_read's request (or an
  // error status), then finish_read once it is done.
  void read_offer(char* dst, size_t len);
  void* start_read(char* dst, size_t len);
  void finish_read(size_t len);
  // Progresses the worker until done() holds; sleeps when nothing happens
  // after the poll window. Throws when the peer is gone. With timeout_ms >= 0
  // returns false once that passes. Called with mutex_ held; lets it go
  // while asleep.
  template <typename Done>
  bool progress_until(Done done, int timeout_ms = -1);
  void wait_request(void* request, const char* what);
  void fail_if_lost();

  static void on_endpoint_error(void* self, ucp_ep_h ep, ucs_status_t status);

  std::unique_ptr<Connection> side_;
  std::mutex mutex_;
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h ep_ = nullptr;
  int wakeup_fd_ = -1;
  std::string lost_;  // why the peer is gone; empty while it is there
  std::vector<char> gathered_;  // small pieces not yet sent
  std::vector<char> received_;  // a small message's bytes not yet read
  size_t received_begin_ = 0;
  Offer offer_;
};

}  // namespace rgpu::transport::ucx
