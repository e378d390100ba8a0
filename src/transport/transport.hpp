// The internal message API every transport implements. A transport lives in
// src/transport/<name>/ with the same parts: connection setup (connect),
// endpoint send/receive (Connection), memory registration and a listener.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "transport/memory_kind.hpp"

namespace rgpu::transport {

struct TransportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const;
  // "host", "host:port", "[v6]:port"; the port defaults to default_port.
  static Endpoint parse(const std::string& text, uint16_t default_port);
};

class Listener;

class Connection {
 public:
  virtual ~Connection() = default;
  // Sends every part, in order; throws TransportError when the peer is gone.
  // `more` says another send follows at once, so small pieces may be held
  // back and leave together.
  virtual void send(std::span<const iovec> parts, bool more = false) = 0;
  // Receives exactly len bytes; throws TransportError on EOF or error.
  virtual void recv(void* dst, size_t len) = 0;
  // Waits up to timeout_ms for data to read; false on timeout.
  virtual bool wait_readable(int timeout_ms) = 0;
  virtual void shutdown() = 0;
  // The OS handle, so the daemon can hand an accepted connection to a worker.
  virtual int native_handle() const = 0;
  virtual std::string peer() const = 0;
  // Passes an open descriptor along with `parts`: only between processes of
  // one host (the shm transport); elsewhere it throws TransportError.
  virtual void send_with_fd(std::span<const iovec> parts, int fd) = 0;
  // The oldest descriptor that arrived with data, or -1.
  virtual int take_fd() = 0;
  // Whether send_with_fd can work: both ends on one host, over a Unix socket.
  virtual bool passes_descriptors() const = 0;
  // A listener reachable the way this connection was reached, speaking what
  // it speaks: a new port on its local address; local_endpoint() says which.
  // Not for a Unix socket (see listen_for_joins).
  virtual std::unique_ptr<Listener> listen_beside() const;
  // Where the other connections of this connection's session join it: over
  // a Unix socket, a new abstract socket that admits only this connection's
  // peer user, and only with `join_secret` offered before anything is
  // mapped; else listen_beside() (the secret is checked in the join frame).
  std::unique_ptr<Listener> listen_for_joins(std::span<const uint8_t> join_secret) const;

  // Zero copy: bulk bytes moved straight between the wire and memory the
  // caller names, no host staging on this side. Whether this connection can
  // for host memory, or for GPU memory of this process's devices (ucx with
  // UCX's CUDA support); byte-stream transports cannot.
  virtual bool zero_copy(MemoryKind) const { return false; }
  // Receives up to len bytes in place while they arrive as a piece the
  // transport reads remotely; returns how many (0: the next bytes come
  // otherwise, recv() them through host memory).
  virtual size_t recv_zero_copy(void* /*dst*/, size_t /*len*/) { return 0; }
  // Sends len bytes the peer reads in place (recv() as usual on its side);
  // false, with nothing sent, when the transport cannot reach that memory.
  virtual bool send_zero_copy(const void* /*src*/, size_t /*len*/) { return false; }
};

class Listener {
 public:
  virtual ~Listener() = default;
  virtual std::unique_ptr<Connection> accept() = 0;
  // Makes a blocked accept() (in another thread) fail.
  virtual void shutdown() = 0;
  virtual int native_handle() const = 0;
  virtual Endpoint local_endpoint() const = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<Connection> connect(const Endpoint& where, int timeout_ms) = 0;
  virtual std::unique_ptr<Listener> listen(const Endpoint& where) = 0;
  // Wraps a handle received from another process (see native_handle).
  virtual std::unique_ptr<Connection> adopt(int handle) = 0;
  // Makes host memory a fast source/target for transfers, until
  // unregistered. Byte-stream transports need nothing; ucx registers it once
  // for all its copies (throws TransportError when it cannot).
  virtual void register_memory(void* /*base*/, size_t /*len*/) {}
  virtual void unregister_memory(void* /*base*/) {}
  // Registrations made (memory pinned for the fabric, by register_memory or
  // for one copy), copies that reused a registered range, and releases.
  struct RegistrationCounts {
    uint64_t made = 0, reused = 0, released = 0;
  };
  virtual RegistrationCounts registration_counts() const { return {}; }
};

std::unique_ptr<Transport> make_tcp_transport();
// Client and server on one host: a Unix socket (Endpoint::host is its path)
// that can also pass shared-memory descriptors.
std::unique_ptr<Transport> make_shm_transport();
// Joins a session over shm at its join point `path` (see listen_for_joins):
// the rings are offered together with the session's join secret.
std::unique_ptr<Connection> connect_shm_join(const std::string& path, std::span<const uint8_t> join_secret);
// UCX (InfiniBand, RoCE, shared memory, TCP: whatever UCX finds), from a
// module loaded on first use; throws TransportError when it cannot load.
std::unique_ptr<Transport> make_ucx_transport();
// Where that module is, found without loading it (empty: not built here).
std::string ucx_module_path();
// TLS 1.3 over TCP (src/transport/tls). Paths of PEM files.
struct TlsSettings {
  std::string certificate;  // this side's certificate (chain); a server's is required
  std::string private_key;  // its key
  // The CA the peer's certificate must chain to. A client's: the server's
  // CA (empty: the system's trust store). A server's: client certificates
  // are required and checked against it (empty: none asked for).
  std::string peer_ca;
};
// Connects only; the server's certificate must name the host connected to.
std::unique_ptr<Transport> make_tls_client_transport(const TlsSettings& settings);
// Listens and adopts only. Throws TransportError when the files are unusable.
std::unique_ptr<Transport> make_tls_server_transport(const TlsSettings& settings);

// Wraps a connected socket received from another process (the daemon hands
// accepted connections to workers): shm for a Unix socket, else `network`'s
// (tcp or tls).
std::unique_ptr<Connection> adopt_socket(int fd, Transport& network);

// The Unix socket a server on TCP `port` also listens on by default; a
// client given that port finds the server's socket there.
std::string default_shm_socket(uint16_t port);

}  // namespace rgpu::transport
