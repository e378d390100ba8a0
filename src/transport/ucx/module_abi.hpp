// The interface between the ucx module and the rest of rgpu. The module
// keeps its own C++ runtime (as the client library does: applications
// bring their own), and an exception cannot unwind from one runtime's
// frames into another's. So nothing crosses this line by exception: each
// call returns null on success, else the error's text, valid until the
// next call on that object. ucx_module.cpp turns these back into
// transport.hpp's classes.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace rgpu::transport::ucx_abi {

class Listener;

class Connection {
 public:
  virtual ~Connection() = default;
  virtual const char* send(const iovec* parts, size_t n, bool more) noexcept = 0;
  virtual const char* recv(void* dst, size_t len) noexcept = 0;
  virtual const char* wait_readable(int timeout_ms, bool* readable) noexcept = 0;
  virtual void shutdown() noexcept = 0;
  virtual int native_handle() const noexcept = 0;
  // The peer's address as text (never null).
  virtual const char* peer() noexcept = 0;
  virtual const char* listen_beside(Listener** out) noexcept = 0;
  // transport.hpp's zero-copy calls.
  virtual bool zero_copy(bool gpu_memory) const noexcept = 0;
  virtual const char* recv_zero_copy(void* dst, size_t len, size_t* received) noexcept = 0;
  virtual const char* send_zero_copy(const void* src, size_t len, bool* sent) noexcept = 0;
};

class Listener {
 public:
  virtual ~Listener() = default;
  virtual const char* accept(Connection** out) noexcept = 0;
  virtual void shutdown() noexcept = 0;
  virtual int native_handle() const noexcept = 0;
  // The listening address (text, never null) and port.
  virtual const char* local_host() noexcept = 0;
  virtual uint16_t local_port() noexcept = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* connect(const char* host, uint16_t port, int timeout_ms, Connection** out) noexcept = 0;
  virtual const char* listen(const char* host, uint16_t port, Listener** out) noexcept = 0;
  virtual const char* adopt(int handle, Connection** out) noexcept = 0;
  // transport.hpp's memory registration (registration_cache.hpp).
  virtual const char* register_memory(void* base, size_t len) noexcept = 0;
  virtual void unregister_memory(void* base) noexcept = 0;
  virtual void registration_counts(uint64_t* made, uint64_t* reused, uint64_t* released) noexcept = 0;
};

// The module's one export: its transport, or null with *error set.
using MakeTransport = Transport* (*)(const char** error);
constexpr const char* kMakeTransport = "rgpu_make_ucx_transport";

}  // namespace rgpu::transport::ucx_abi
