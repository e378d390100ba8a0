#include "transport/tls/tls_context.hpp"

#include <openssl/err.h>

namespace rgpu::transport {
namespace {

// AES-128-GCM first: the fastest suite with AES instructions, and one the
// kernel's TLS offload takes.
constexpr const char* kCipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

TlsContext new_context(const SSL_METHOD* method) {
  TlsContext ctx(SSL_CTX_new(method), SSL_CTX_free);
  if (!ctx) throw TransportError(tls_error("cannot create a TLS context"));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx.get(), TLS1_3_VERSION);
  SSL_CTX_set_ciphersuites(ctx.get(), kCipherSuites);
  // Records go to the kernel where it offers TLS (the `tls` module), so bulk
  // data is encrypted without a copy through user space.
  SSL_CTX_set_options(ctx.get(), SSL_OP_ENABLE_KTLS);
  // A peer that closes without close_notify has ended the connection, as
  // over tcp; rgpu's frames carry their lengths, so a cut frame is noticed.
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
  return ctx;
}

void load_identity(SSL_CTX* ctx, const TlsSettings& s) {
  if (SSL_CTX_use_certificate_chain_file(ctx, s.certificate.c_str()) != 1)
    throw TransportError(tls_error("cannot load the certificate " + s.certificate));
  // OpenSSL checks here that the key is the certificate's.
  if (SSL_CTX_use_PrivateKey_file(ctx, s.private_key.c_str(), SSL_FILETYPE_PEM) != 1)
    throw TransportError(tls_error("cannot load the private key " + s.private_key + " of " + s.certificate));
}

void load_ca(SSL_CTX* ctx, const std::string& ca) {
  if (SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr) != 1)
    throw TransportError(tls_error("cannot load the CA certificates " + ca));
}

}  // namespace

std::string tls_error(const std::string& what) {
  std::string out = what;
  const char* sep = ": ";
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += sep;
    out += buf;
    sep = "; ";
  }
  return out;
}

TlsContext make_tls_client_context(const TlsSettings& s) {
  TlsContext ctx = new_context(TLS_client_method());
  if (s.peer_ca.empty()) {
    if (SSL_CTX_set_default_verify_paths(ctx.get()) != 1)
      throw TransportError(tls_error("cannot load the system's CA certificates"));
  } else {
    load_ca(ctx.get(), s.peer_ca);
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!s.certificate.empty() || !s.private_key.empty()) {
    if (s.certificate.empty() || s.private_key.empty())
      throw TransportError("a client certificate needs both RGPU_TLS_CERT and RGPU_TLS_KEY");
    load_identity(ctx.get(), s);
  }
  return ctx;
}

TlsContext make_tls_server_context(const TlsSettings& s) {
  if (s.certificate.empty() || s.private_key.empty())
    throw TransportError("a TLS server needs a certificate and its key");
  TlsContext ctx = new_context(TLS_server_method());
  load_identity(ctx.get(), s);
  if (!s.peer_ca.empty()) {
    load_ca(ctx.get(), s.peer_ca);
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(s.peer_ca.c_str());
    if (names) SSL_CTX_set_client_CA_list(ctx.get(), names);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  // No session tickets: a client never resumes (each connection is a new
  // handshake), and a ticket arriving after the handshake would make a
  // readable socket that holds no data.
  SSL_CTX_set_num_tickets(ctx.get(), 0);
  return ctx;
}

}  // namespace rgpu::transport
