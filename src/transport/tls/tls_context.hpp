// OpenSSL contexts of the TLS transport: TLS 1.3 only, peers verified
// against the configured CA, kernel TLS where the kernel offers it.
#pragma once
#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "transport/transport.hpp"

namespace rgpu::transport {

using TlsContext = std::shared_ptr<SSL_CTX>;

// A client's: the server's certificate must chain to settings.peer_ca (the
// system's trust store when empty); settings.certificate/private_key, when
// given, are offered to servers that ask for a client certificate.
TlsContext make_tls_client_context(const TlsSettings& settings);

// A server's: its certificate and key are required; with settings.peer_ca,
// every client must present a certificate that chains to it.
TlsContext make_tls_server_context(const TlsSettings& settings);

// "what: " followed by OpenSSL's queued errors (the queue is emptied).
std::string tls_error(const std::string& what);

}  // namespace rgpu::transport
