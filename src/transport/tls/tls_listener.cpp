#include "transport/tls/tls_listener.hpp"

#include "transport/tls/tls_connection.hpp"

namespace rgpu::transport {

std::unique_ptr<Connection> TlsListener::accept() {
  return std::make_unique<TlsConnection>(tcp_.accept_socket(), ctx_);
}

}  // namespace rgpu::transport
