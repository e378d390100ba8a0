// One connection from the application to a server's worker. Each
// application thread gets one of its own (see Session), so the blocking call
// of one thread never holds up another's; the worker serves each connection
// on a thread of its own.
#pragma once
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace rgpu::client {

class Session;

class Lane {
 public:
  Lane(Session& session, std::unique_ptr<transport::Connection> conn)
      : session_(session), conn_(std::move(conn)) {}

  // Each request gets the session's next number as it is sent; *used says
  // which.
  cudaError_t call(uint16_t op, uint16_t device, std::span<const uint8_t> args, std::span<const iovec> payload,
                   std::vector<uint8_t>& reply_args, bool report_deferred, uint64_t* used);
  cudaError_t call_into(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst, size_t n,
                        std::vector<uint8_t>& reply_args, uint64_t* used);
  cudaError_t call_with_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int fd,
                           std::vector<uint8_t>& reply_args, uint64_t* used);
  // A synchronous call whose successful reply brings a descriptor (shm):
  // *fd is the client's own copy, or -1 when the call failed.
  cudaError_t call_taking_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int* fd,
                             std::vector<uint8_t>& reply_args, uint64_t* used);
  cudaError_t post(uint16_t op, uint16_t device, std::span<const uint8_t> args, std::span<const iovec> payload);
  // An asynchronous download (n bytes into dst, page-locked memory) whose
  // answer is read later: by this lane's next synchronous call (the worker
  // answers a connection's requests in order), or by drain(). So a small
  // copy then a synchronize (PyTorch's .item(), XLA's loop conditions) costs
  // one round trip and no other thread. `stream`: the server's handle.
  cudaError_t post_download(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst, size_t n,
                            uint64_t stream);
  // Returns once every download posted here numbered below `seq` is in
  // place, with the first error one of them hit (reported once).
  cudaError_t drain(uint64_t seq);
  // An asynchronous call numbered `seq` earlier, answered: with its status,
  // and with n bytes of data into dst when n is not 0. `parts_before`: parts
  // of the same copy numbered just before it (proto::parts_before).
  cudaError_t post_answered(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                            std::span<const iovec> payload, void* dst, size_t n, uint64_t seq,
                            unsigned parts_before = 0);

  // From now on the calling thread's requests go unnumbered (sequence 0):
  // the worker starts them at once, behind no other thread's request, and
  // they wait for no background copy. For rgpu's host-callback thread only,
  // whose calls (a graph's staged copy, graph/staged_copy.hpp) run while an
  // application stream waits for them: numbered, they could wait behind a
  // request that itself waits for that stream.
  static void unnumbered_on_this_thread();

  // Makes a call blocked on this connection fail (the server is lost).
  void shutdown() { conn_->shutdown(); }

 private:
  cudaError_t receive_reply(std::vector<uint8_t>& reply_args, void* dst, size_t n, bool report_deferred);
  cudaError_t receive_one(std::vector<uint8_t>& reply_args, void* dst, size_t n, bool report_deferred);
  // Reads the answers of the downloads posted before (under mutex_), those
  // numbered below `seq`; the first error one of them hit.
  cudaError_t read_downloads(uint64_t seq);
  // What kernels printed, sent ahead of a reply.
  void print_device_output(const proto::FrameHeader& h);
  // Runs one exchange under the lock (a lane is shared by threads only
  // when the server offers no way to join); a transport error loses the
  // server.
  template <typename F>
  cudaError_t exchange(uint64_t seq, uint64_t* used, F&& f);

  Session& session_;
  std::unique_ptr<transport::Connection> conn_;
  std::mutex mutex_;
  // The first error of this lane's asynchronous calls, reported by its next
  // synchronising call.
  cudaError_t pending_deferred_ = cudaSuccess;
  struct Download {
    uint64_t seq;
    uint16_t device;
    uint64_t stream;
    void* dst;
    size_t n;
  };
  // Posted downloads not yet read, in number order; guarded by downloads_mutex_
  // (read under mutex_ too), which a drain waits on while another thread
  // holds the lane.
  std::mutex downloads_mutex_;
  std::condition_variable downloads_read_;
  std::deque<Download> downloads_;
};

}  // namespace rgpu::client
