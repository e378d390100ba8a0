// One forwarded call: choose the session (by device, stream or event), encode
// arguments, then run it synchronously or post it asynchronously.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <vector>

#include "client/core/runtime.hpp"
#include "protocol/codec.hpp"

namespace rgpu::client {

// Runs before every forwarded call, which may let a GPU touch memory (the
// runtime's software-coherent managed memory hands its host writes over),
// with the call's op and whether it is asynchronous (GPU work may still run
// when it returns).
void set_before_device_work(void (*hook)(uint16_t op, bool async));

// Whether `fd` is an open descriptor of this process: one that sendmsg
// refuses would cost the connection it travels on.
bool descriptor_open(int fd);

class Call {
 public:
  explicit Call(uint16_t op) : op_(op) {}

  // Routing; each returns cudaSuccess or the error the API must return.
  cudaError_t to_current_device();
  cudaError_t to_device(int device, int32_t* remote_ordinal);
  cudaError_t to_stream(cudaStream_t stream, uint64_t* remote);
  cudaError_t to_event(cudaEvent_t event, uint64_t* remote);

  proto::Writer& args() { return args_; }
  // For calls that only read information: leave asynchronous errors pending.
  Call& quiet() {
    report_deferred_ = false;
    return *this;
  }
  cudaError_t run(std::span<const iovec> payload = {});
  cudaError_t run_into(void* dst, size_t n);
  // A call that, when it succeeds, has waited for everything queued on the
  // server's `stream` (Session::mark_idle): a stream synchronize, which is
  // answered without a round trip while that stream is known idle, or a
  // download (n bytes into dst).
  cudaError_t run_synchronizing(uint64_t stream);
  cudaError_t run_into_synchronizing(void* dst, size_t n, uint64_t stream);
  // Synchronous calls that hand the server a descriptor (which must be
  // open, else cudaErrorInvalidValue), or take one from its reply (*fd: -1
  // unless the call succeeded); shm only.
  cudaError_t run_with_fd(int fd);
  cudaError_t run_taking_fd(int* fd);
  // cudaErrorNotSupported, logged as `api`'s, where file descriptors cannot
  // reach the routed server: only between processes of one host (shm).
  cudaError_t descriptors_travel(const char* api) const;
  cudaError_t post(std::span<const iovec> payload = {});
  // An asynchronous download of n bytes into page-locked dst on the server's
  // `stream`, read back later (Session::post_download).
  cudaError_t post_download(void* dst, size_t n, uint64_t stream);
  // Outputs of a successful run().
  proto::Reader& reply() { return reply_; }

  uint16_t op() const { return op_; }
  int device_index() const { return index_; }
  // The frame header's device: the server ordinal and the thread's green
  // context there (proto::header_device).
  uint16_t wire_device() const { return wire_device_; }
  VirtualDevice* device() const { return dev_; }

 private:
  cudaError_t route(int index);
  // run and run_into; *used, when given, receives the request's number.
  cudaError_t run_numbered(std::span<const iovec> payload, uint64_t* used);
  cudaError_t run_into_numbered(void* dst, size_t n, uint64_t* used);

  uint16_t op_;
  int index_ = -1;
  uint16_t wire_device_ = 0;
  VirtualDevice* dev_ = nullptr;
  bool report_deferred_ = true;
  proto::Writer args_;
  std::vector<uint8_t> reply_buf_;
  proto::Reader reply_;
};

}  // namespace rgpu::client
