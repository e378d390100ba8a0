// A listening Unix socket for clients on the same host.
#pragma once
#include <sys/types.h>

#include <optional>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::transport {

// Who may connect to a session's join point: only its owner's user (the
// peer credentials of the session's first connection), offering the
// session's join secret with its rings.
struct JoinGuard {
  uid_t owner;
  std::vector<uint8_t> secret;
};

class ShmListener final : public Listener {
 public:
  // Without a guard, any peer the socket's file mode lets in is accepted.
  explicit ShmListener(const std::string& path, std::optional<JoinGuard> guard = std::nullopt);
  ~ShmListener() override;
  ShmListener(const ShmListener&) = delete;
  ShmListener& operator=(const ShmListener&) = delete;

  // With a guard, a connection of another user is closed at once, before
  // anything is read from it.
  std::unique_ptr<Connection> accept() override;
  void shutdown() override;
  int native_handle() const override { return fd_; }
  Endpoint local_endpoint() const override { return Endpoint{path_, 0}; }

 private:
  std::string path_;
  std::optional<JoinGuard> guard_;
  int fd_ = -1;
};

}  // namespace rgpu::transport
