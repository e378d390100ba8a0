// Loads the ucx transport (librgpu-transport-ucx.so) on first use and
// presents it as transport.hpp's classes (see ucx/module_abi.hpp). The
// module lives in the folder of the library or program that holds this
// code, in its lib/ (rgpu-server beside build/lib) or in ../lib (bin/
// beside lib/, the tests' folder), and brings libucx with it: clients and
// servers that never ask for ucx never load either.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "transport/transport.hpp"
#include "transport/ucx/module_abi.hpp"

namespace rgpu::transport {
namespace {

constexpr const char* kModule = "librgpu-transport-ucx.so";

void check(const char* error) {
  if (error) throw TransportError(error);
}

class UcxModuleListener;

class UcxModuleConnection final : public Connection {
 public:
  explicit UcxModuleConnection(ucx_abi::Connection* c) : c_(c) {}
  void send(std::span<const iovec> parts, bool more) override { check(c_->send(parts.data(), parts.size(), more)); }
  void recv(void* dst, size_t len) override { check(c_->recv(dst, len)); }
  bool wait_readable(int timeout_ms) override {
    bool readable = false;
    check(c_->wait_readable(timeout_ms, &readable));
    return readable;
  }
  void shutdown() override { c_->shutdown(); }
  int native_handle() const override { return c_->native_handle(); }
  std::string peer() const override { return c_->peer(); }
  void send_with_fd(std::span<const iovec>, int) override {
    throw TransportError("descriptors cannot travel over ucx (only over shm)");
  }
  int take_fd() override { return -1; }
  bool passes_descriptors() const override { return false; }
  std::unique_ptr<Listener> listen_beside() const override;
  bool zero_copy(MemoryKind kind) const override { return c_->zero_copy(kind == MemoryKind::gpu); }
  size_t recv_zero_copy(void* dst, size_t len) override {
    size_t received = 0;
    check(c_->recv_zero_copy(dst, len, &received));
    return received;
  }
  bool send_zero_copy(const void* src, size_t len) override {
    bool sent = false;
    check(c_->send_zero_copy(src, len, &sent));
    return sent;
  }

 private:
  std::unique_ptr<ucx_abi::Connection> c_;
};

class UcxModuleListener final : public Listener {
 public:
  explicit UcxModuleListener(ucx_abi::Listener* l) : l_(l) {}
  std::unique_ptr<Connection> accept() override {
    ucx_abi::Connection* c = nullptr;
    check(l_->accept(&c));
    return std::make_unique<UcxModuleConnection>(c);
  }
  void shutdown() override { l_->shutdown(); }
  int native_handle() const override { return l_->native_handle(); }
  Endpoint local_endpoint() const override { return {l_->local_host(), l_->local_port()}; }

 private:
  std::unique_ptr<ucx_abi::Listener> l_;
};

std::unique_ptr<Listener> UcxModuleConnection::listen_beside() const {
  ucx_abi::Listener* l = nullptr;
  check(c_->listen_beside(&l));
  return std::make_unique<UcxModuleListener>(l);
}

class UcxModuleTransport final : public Transport {
 public:
  explicit UcxModuleTransport(ucx_abi::Transport* t) : t_(t) {}
  std::string name() const override { return "ucx"; }
  std::unique_ptr<Connection> connect(const Endpoint& where, int timeout_ms) override {
    ucx_abi::Connection* c = nullptr;
    check(t_->connect(where.host.c_str(), where.port, timeout_ms, &c));
    return std::make_unique<UcxModuleConnection>(c);
  }
  std::unique_ptr<Listener> listen(const Endpoint& where) override {
    ucx_abi::Listener* l = nullptr;
    check(t_->listen(where.host.c_str(), where.port, &l));
    return std::make_unique<UcxModuleListener>(l);
  }
  std::unique_ptr<Connection> adopt(int handle) override {
    ucx_abi::Connection* c = nullptr;
    check(t_->adopt(handle, &c));
    return std::make_unique<UcxModuleConnection>(c);
  }
  void register_memory(void* base, size_t len) override { check(t_->register_memory(base, len)); }
  void unregister_memory(void* base) override { t_->unregister_memory(base); }
  RegistrationCounts registration_counts() const override {
    RegistrationCounts c;
    t_->registration_counts(&c.made, &c.reused, &c.released);
    return c;
  }

 private:
  ucx_abi::Transport* t_;  // the module's, never unloaded
};

// Where the module may be: beside rgpu's own file, in lib/ below it, or in
// ../lib/. The file's real path: a program started by a link
// (/usr/sbin/rgpu-server) is named by that link.
std::vector<std::string> module_candidates() {
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&make_ucx_transport), &self) || !self.dli_fname)
    throw TransportError("ucx transport: cannot find rgpu's own folder");
  char real[PATH_MAX];
  std::string dir = realpath(self.dli_fname, real) ? real : self.dli_fname;
  dir = dir.substr(0, dir.rfind('/') + 1);
  return {dir + kModule, dir + "lib/" + kModule, dir + "../lib/" + kModule};
}

ucx_abi::Transport* load_module() {
  // UCX logs to standard output unless told otherwise, which would mix its
  // warnings into the application's own output; a user's choice stands.
  setenv("UCX_LOG_FILE", "stderr", 0);
  std::string why;
  for (const std::string& path : module_candidates()) {
    if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      auto make = reinterpret_cast<ucx_abi::MakeTransport>(dlsym(lib, ucx_abi::kMakeTransport));
      if (!make) throw TransportError(path + " has no " + ucx_abi::kMakeTransport);
      const char* error = nullptr;
      ucx_abi::Transport* t = make(&error);
      if (!t) throw TransportError(std::string("UCX did not start: ") + (error ? error : "?"));
      return t;
    }
    why += std::string(why.empty() ? "" : "; ") + dlerror();
  }
  throw TransportError("ucx transport unavailable (is libucx installed? see docs/ucx.md): " + why);
}

}  // namespace

std::string ucx_module_path() {
  for (const std::string& path : module_candidates())
    if (access(path.c_str(), R_OK) == 0) return path;
  return {};
}

std::unique_ptr<Transport> make_ucx_transport() {
  static std::mutex mutex;
  static ucx_abi::Transport* module = nullptr;
  std::lock_guard lock(mutex);
  if (!module) module = load_module();
  return std::make_unique<UcxModuleTransport>(module);
}

}  // namespace rgpu::transport
