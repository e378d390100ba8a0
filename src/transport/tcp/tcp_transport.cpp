// TCP: connection setup and the factory for the transport's parts.
#include "transport/socket/socket_connection.hpp"
#include "transport/tcp/tcp_connect.hpp"
#include "transport/tcp/tcp_listener.hpp"

namespace rgpu::transport {
namespace {

class TcpTransport final : public Transport {
 public:
  std::string name() const override { return "tcp"; }

  std::unique_ptr<Connection> connect(const Endpoint& where, int timeout_ms) override {
    return std::make_unique<SocketConnection>(tcp_connect(where, timeout_ms));
  }

  std::unique_ptr<Listener> listen(const Endpoint& where) override {
    return std::make_unique<TcpListener>(where);
  }

  std::unique_ptr<Connection> adopt(int handle) override {
    return std::make_unique<SocketConnection>(handle);
  }
};

}  // namespace

std::unique_ptr<Transport> make_tcp_transport() { return std::make_unique<TcpTransport>(); }

}  // namespace rgpu::transport
