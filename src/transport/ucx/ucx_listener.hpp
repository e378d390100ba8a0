// Accepts ucx connections: a TCP listener whose accepted sockets become the
// side channels of UcxConnections (see ucx_connection.hpp).
#pragma once
#include <memory>

#include "transport/transport.hpp"

namespace rgpu::transport::ucx {

class UcxListener final : public Listener {
 public:
  explicit UcxListener(std::unique_ptr<Listener> tcp) : tcp_(std::move(tcp)) {}
  std::unique_ptr<Connection> accept() override;
  void shutdown() override { tcp_->shutdown(); }
  int native_handle() const override { return tcp_->native_handle(); }
  Endpoint local_endpoint() const override { return tcp_->local_endpoint(); }

 private:
  std::unique_ptr<Listener> tcp_;
};

}  // namespace rgpu::transport::ucx
