// A listening Unix socket for clients on the same host.
#pragma once
#include "transport/transport.hpp"

namespace rgpu::transport {

class ShmListener final : public Listener {
 public:
  explicit ShmListener(const std::string& path);
  ~ShmListener() override;
  ShmListener(const ShmListener&) = delete;
  ShmListener& operator=(const ShmListener&) = delete;

  std::unique_ptr<Connection> accept() override;
  void shutdown() override;
  int native_handle() const override { return fd_; }
  Endpoint local_endpoint() const override { return Endpoint{path_, 0}; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace rgpu::transport
