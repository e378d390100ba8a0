// One connection to one rgpu-server: the handshake, then calls. Calls from
// several application threads are serialised on the connection.
#pragma once
#include <cstdint>
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "protocol/handshake.hpp"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace rgpu::client {

class Session {
 public:
  // Connects and shakes hands; on failure returns null and says why.
  static std::unique_ptr<Session> open(const transport::Endpoint& server, const std::vector<int>& gpus,
                                       std::string* why);

  // Synchronous call: returns the call's status, or an error an earlier
  // asynchronous call hit. reply_args receives the reply's outputs.
  // Calls that only read information pass report_deferred=false so that
  // error stays pending for the application's next call.
  cudaError_t call(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                   std::span<const iovec> payload, std::vector<uint8_t>& reply_args,
                   bool report_deferred = true);
  // Synchronous call whose reply streams n bytes into dst.
  cudaError_t call_into(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst,
                        size_t n, std::vector<uint8_t>& reply_args);
  // Synchronous call that also hands the server an open descriptor (shm).
  cudaError_t call_with_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int fd,
                           std::vector<uint8_t>& reply_args);
  // Asynchronous call: no reply; its error surfaces at a later call.
  cudaError_t post(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                   std::span<const iovec> payload = {});

  const proto::HelloReply& hello() const { return hello_; }
  const transport::Endpoint& server() const { return server_; }
  // True over shm: page-locked memory can be shared with the server.
  bool shares_memory() const { return transport_name_ == "shm"; }
  const std::string& transport_name() const { return transport_name_; }

 private:
  Session(transport::Endpoint server, std::unique_ptr<transport::Connection> conn);
  cudaError_t receive_reply(std::vector<uint8_t>& reply_args, void* dst, size_t n,
                            bool report_deferred);
  cudaError_t lost(const char* what);
  // Runs one exchange on the connection under the lock; a transport error
  // marks the server lost.
  template <typename F>
  cudaError_t exchange(F&& f);

  transport::Endpoint server_;
  std::unique_ptr<transport::Connection> conn_;
  proto::HelloReply hello_;
  std::mutex mutex_;
  std::string transport_name_;
  bool dead_ = false;
  cudaError_t pending_deferred_ = cudaSuccess;  // once the server is gone every call fails at once
};

}  // namespace rgpu::client
