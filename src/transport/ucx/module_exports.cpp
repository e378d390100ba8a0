// The module's side of module_abi.hpp: the ucx transport's classes behind
// calls that catch every exception and hand back its text instead.
#include <memory>
#include <string>

#include "transport/ucx/module_abi.hpp"
#include "transport/ucx/registration_cache.hpp"
#include "transport/ucx/ucx_connection.hpp"
#include "transport/ucx/ucx_context.hpp"
#include "transport/ucx/ucx_listener.hpp"

namespace rgpu::transport::ucx {
namespace {

// Runs f; returns null, or the text of what it threw (kept in `error`).
template <typename F>
const char* guarded(std::string& error, F f) noexcept {
  try {
    f();
    return nullptr;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown error in the ucx transport";
  }
  return error.c_str();
}

class ExportedListener;

class ExportedConnection final : public ucx_abi::Connection {
 public:
  explicit ExportedConnection(std::unique_ptr<transport::Connection> c) : c_(std::move(c)) {}
  const char* send(const iovec* parts, size_t n, bool more) noexcept override {
    return guarded(error_, [&] { c_->send({parts, n}, more); });
  }
  const char* recv(void* dst, size_t len) noexcept override {
    return guarded(error_, [&] { c_->recv(dst, len); });
  }
  const char* wait_readable(int timeout_ms, bool* readable) noexcept override {
    return guarded(error_, [&] { *readable = c_->wait_readable(timeout_ms); });
  }
  void shutdown() noexcept override {
    guarded(error_, [&] { c_->shutdown(); });
  }
  int native_handle() const noexcept override { return c_->native_handle(); }
  const char* peer() noexcept override {
    if (guarded(error_, [&] { peer_ = c_->peer(); })) peer_ = "?";
    return peer_.c_str();
  }
  const char* listen_beside(ucx_abi::Listener** out) noexcept override;
  bool zero_copy(bool gpu_memory) const noexcept override {
    return c_->zero_copy(gpu_memory ? MemoryKind::gpu : MemoryKind::host);
  }
  const char* recv_zero_copy(void* dst, size_t len, size_t* received) noexcept override {
    return guarded(error_, [&] { *received = c_->recv_zero_copy(dst, len); });
  }
  const char* send_zero_copy(const void* src, size_t len, bool* sent) noexcept override {
    return guarded(error_, [&] { *sent = c_->send_zero_copy(src, len); });
  }

 private:
  std::unique_ptr<transport::Connection> c_;
  std::string error_, peer_;
};

class ExportedListener final : public ucx_abi::Listener {
 public:
  explicit ExportedListener(std::unique_ptr<transport::Listener> l) : l_(std::move(l)) {}
  const char* accept(ucx_abi::Connection** out) noexcept override {
    return guarded(error_, [&] { *out = new ExportedConnection(l_->accept()); });
  }
  void shutdown() noexcept override {
    guarded(error_, [&] { l_->shutdown(); });
  }
  int native_handle() const noexcept override { return l_->native_handle(); }
  const char* local_host() noexcept override {
    if (guarded(error_, [&] { host_ = l_->local_endpoint().host; })) host_ = "?";
    return host_.c_str();
  }
  uint16_t local_port() noexcept override {
    uint16_t port = 0;
    guarded(error_, [&] { port = l_->local_endpoint().port; });
    return port;
  }

 private:
  std::unique_ptr<transport::Listener> l_;
  std::string error_, host_;
};

const char* ExportedConnection::listen_beside(ucx_abi::Listener** out) noexcept {
  return guarded(error_, [&] { *out = new ExportedListener(c_->listen_beside()); });
}

// Connections meet on TCP (see ucx_connection.hpp).
class ExportedTransport final : public ucx_abi::Transport {
 public:
  const char* connect(const char* host, uint16_t port, int timeout_ms, ucx_abi::Connection** out) noexcept override {
    return guarded(error_, [&] {
      *out = new ExportedConnection(std::make_unique<UcxConnection>(make_tcp_transport()->connect({host, port}, timeout_ms)));
    });
  }
  const char* listen(const char* host, uint16_t port, ucx_abi::Listener** out) noexcept override {
    return guarded(error_, [&] {
      *out = new ExportedListener(std::make_unique<UcxListener>(make_tcp_transport()->listen({host, port})));
    });
  }
  // The server's end of a connection the daemon accepted on its ucx port.
  const char* adopt(int handle, ucx_abi::Connection** out) noexcept override {
    return guarded(error_, [&] { *out = new ExportedConnection(std::make_unique<UcxConnection>(make_tcp_transport()->adopt(handle))); });
  }
  const char* register_memory(void* base, size_t len) noexcept override {
    return guarded(error_, [&] { RegistrationCache::get().add(base, len); });
  }
  void unregister_memory(void* base) noexcept override { RegistrationCache::get().release(base); }
  void registration_counts(uint64_t* made, uint64_t* reused, uint64_t* released) noexcept override {
    RegistrationCounts c = RegistrationCache::get().counts();
    *made = c.made;
    *reused = c.reused;
    *released = c.released;
  }

 private:
  std::string error_;
};

}  // namespace
}  // namespace rgpu::transport::ucx

// Creates the UCP context at once, so a failure to initialise UCX shows
// when the module loads and a pre-started worker pays it before its client.
extern "C" rgpu::transport::ucx_abi::Transport* rgpu_make_ucx_transport(const char** error) noexcept {
  static std::string why;
  if (rgpu::transport::ucx::guarded(why, [] { rgpu::transport::ucx::context(); })) {
    *error = why.c_str();
    return nullptr;
  }
  return new rgpu::transport::ucx::ExportedTransport();
}
