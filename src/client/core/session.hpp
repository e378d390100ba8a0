// One application's session with one rgpu-server: the handshake, then calls.
// Each application thread talks to the session's worker over a connection
// of its own (a Lane): the first connection opens the session, and a thread
// without one joins with the secret the server handed out. Lanes of threads
// that ended are kept for later threads.
#pragma once
#include <cstdint>
#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <optional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "client/core/background_copies.hpp"
#include "client/core/heartbeat.hpp"
#include "client/core/host_callback_runner.hpp"
#include "client/core/lane.hpp"
#include "protocol/handshake.hpp"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace rgpu::client {

class Session {
 public:
  // Connects and shakes hands; on failure returns null and says why.
  // `transport` as in DeviceSpec.
  static std::unique_ptr<Session> open(const transport::Endpoint& server, const std::string& transport,
                                       const std::vector<int>& gpus, std::string* why);
  // What a probe learned (`rgpu doctor`): the transport taken, and the
  // server's answer whether it admitted the probe or refused it (a refusal
  // still names the server's protocol version).
  struct ProbeAnswer {
    std::string transport;
    bool reached = false;  // connected (why says otherwise)
    bool refused = false;  // reply holds the server's refusal
    std::optional<proto::HelloReply> reply;
    std::string why;  // empty when admitted
  };
  static ProbeAnswer probe(const transport::Endpoint& server, const std::string& transport);
  // A request other than a session (`rgpu smi`, `rgpu job-end`, `rgpu
  // migrate`): the server's answer, or nullopt with why not. A job key, when
  // given, is proved (never sent). `session` and `move_to` name a move.
  static std::optional<proto::HelloReply> ask(const transport::Endpoint& server, uint8_t request,
                                              const std::string& job_key, const std::string& job, std::string* why,
                                              uint32_t session = 0, const std::string& move_to = "");
  // Applications keep their sessions for good; tests end theirs, and a
  // later session at the same address must not find this one's lanes.
  ~Session();

  // Synchronous call: returns the call's status, or an error an earlier
  // asynchronous call of this thread hit. reply_args receives the reply's
  // outputs. Calls that only read information pass report_deferred=false so
  // that error stays pending for the application's next call.
  // *used, when given, receives the number the request went with.
  cudaError_t call(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                   std::span<const iovec> payload, std::vector<uint8_t>& reply_args,
                   bool report_deferred = true, uint64_t* used = nullptr) {
    uint64_t seq = 0;
    cudaError_t e = lane().call(op, device, args, payload, reply_args, report_deferred, &seq);
    if (used) *used = seq;
    return report_deferred ? settle(e, seq) : e;
  }
  // Synchronous call whose reply streams n bytes into dst.
  cudaError_t call_into(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst,
                        size_t n, std::vector<uint8_t>& reply_args, uint64_t* used = nullptr) {
    uint64_t seq = 0;
    cudaError_t e = settle(lane().call_into(op, device, args, dst, n, reply_args, &seq), seq);
    if (used) *used = seq;
    return e;
  }
  // Request `seq` finished with nothing left queued on `stream` of `device`
  // (server handles): a stream synchronize, or a download on that stream.
  // While no request is numbered after it, that stream is known to be idle,
  // and synchronizing it again needs no round trip (CuPy's `.get()` and
  // PyTorch's `.item()` synchronize right after such a download).
  void mark_idle(uint64_t seq, uint16_t device, uint64_t stream);
  // True when the stream is known idle; *status is then the synchronize's
  // answer, once the background copies numbered before are done.
  bool synchronized_already(uint16_t device, uint64_t stream, cudaError_t* status);
  // Synchronous call that also hands the server an open descriptor (shm).
  cudaError_t call_with_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int fd,
                           std::vector<uint8_t>& reply_args) {
    uint64_t seq = 0;
    return settle(lane().call_with_fd(op, device, args, fd, reply_args, &seq), seq);
  }
  // Synchronous call whose successful reply hands over a descriptor (shm).
  cudaError_t call_taking_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int* fd,
                             std::vector<uint8_t>& reply_args) {
    uint64_t seq = 0;
    cudaError_t e = settle(lane().call_taking_fd(op, device, args, fd, reply_args, &seq), seq);
    if (e != cudaSuccess) drop_fd(fd);
    return e;
  }
  // An asynchronous copy from or to page-locked memory, moved by a thread of
  // the session; false when that is not possible (copy synchronously).
  bool copy_in_background(const BackgroundCopies::Copy& copy, unsigned parts = 1);
  // Waits for every background copy (before page-locked memory goes).
  void finish_background_copies();
  // Waits for the background copies numbered below seq on a stream (see
  // BackgroundCopies::wait_before_on).
  void wait_background_copies(uint64_t seq, uint16_t device, uint64_t stream);
  HostCallbackRunner& host_callbacks();
  // A small asynchronous download into page-locked memory on this thread's
  // lane, its answer read later (Lane::post_download).
  cudaError_t post_download(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst, size_t n,
                            uint64_t stream) {
    return lane().post_download(op, device, args, dst, n, stream);
  }
  // For lanes: how many posted downloads are not yet read.
  void download_posted() { unread_downloads_.fetch_add(1); }
  void download_read() { unread_downloads_.fetch_sub(1); }
  // Asynchronous call: no reply; its error surfaces at a later call.
  cudaError_t post(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                   std::span<const iovec> payload = {}) {
    return lane().post(op, device, args, payload);
  }

  const proto::HelloReply& hello() const { return hello_; }
  const transport::Endpoint& server() const { return server_; }
  // True over shm: page-locked memory can be shared with the server.
  bool shares_memory() const { return transport_name_ == "shm"; }
  const std::string& transport_name() const { return transport_name_; }

  // For lanes: requests are numbered across all of them (see FrameHeader).
  uint64_t next_seq() { return next_seq_.fetch_add(1, std::memory_order_relaxed); }
  bool dead() const { return dead_.load(); }
  // Marks the server lost (every lane fails from now on) and says why once.
  cudaError_t lost(const char* what);
  // The session moved to another server (docs/migration.md): its
  // connections close, so its worker ends and frees what it held. The
  // object stays, as threads' lanes name it; a call through it fails.
  void retire();
  // A lane whose thread ended, for a later thread.
  void release(Lane* lane);
  // A lane for one thread's use only, or null when none can be had.
  Lane* dedicated_lane();
  // A new connection joining the session for `purpose` (a
  // proto::JoinPurpose), or null when joining is not possible.
  std::unique_ptr<transport::Connection> join(uint8_t purpose);

 private:
  Session(transport::Endpoint server, std::string transport_name);
  // The calling thread's lane: its own, a released one, or a new one that
  // joins the session; the first lane when joining is not possible.
  Lane& lane();
  // A synchronous call's status, once the background copies numbered
  // before it (seq) are done; their error if the call had none.
  cudaError_t settle(cudaError_t status, uint64_t seq);
  // Closes *fd (a descriptor a failed call must not hand out) and sets -1.
  static void drop_fd(int* fd);

  transport::Endpoint server_;
  std::string transport_name_;
  proto::HelloReply hello_;
  std::atomic<uint64_t> next_seq_{1};
  std::atomic<int> unread_downloads_{0};
  // Reads the posted downloads numbered below seq, on every lane; the first
  // error one of them hit.
  cudaError_t drain_downloads(uint64_t seq);
  struct IdleStream {
    uint64_t seq = 0;  // 0: none known
    uint16_t device = 0;
    uint64_t stream = 0;
  };
  std::mutex idle_mutex_;
  IdleStream idle_stream_;
  std::atomic<bool> dead_{false};
  std::mutex mutex_;  // guards the lane lists
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<Lane*> idle_;
  Lane* first_ = nullptr;
  std::atomic<bool> joining_failed_{false};
  std::once_flag background_once_;
  std::unique_ptr<BackgroundCopies> background_;
  std::atomic<bool> background_used_{false};
  std::once_flag callbacks_once_;
  std::unique_ptr<HostCallbackRunner> callbacks_;
  // Last, so that it stops first.
  std::unique_ptr<Heartbeat> heartbeat_;
};

}  // namespace rgpu::client
