// POSIX file descriptor shareable handles for sessions whose connection
// carries no descriptors (tcp, ucx). The exporting worker keeps the
// driver's descriptor and hands out a token with a 256-bit secret
// (proto::DescriptorToken), which the client wraps in a stand-in
// descriptor. An importing worker of this server presents the token over
// the exporter's Unix socket, in the 0700 --ipc-dir and named
// "PID-descriptors" (no secret in it), and gets the descriptor back with
// SCM_RIGHTS. Both ends check the other is a worker of this server (the
// server's uid; the importer also the token's pid), and the exporter
// applies --ipc-sharing to the importer's client and job.
//
// A kept descriptor lives until its allocation is released, its pool
// destroyed or its session ends: a stand-in not imported by then imports
// no more (an import already made keeps the memory, as CUDA's does).
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/descriptor_token.hpp"
#include "server/worker/ipc_records.hpp"

namespace rgpu::server {

class DescriptorExports {
 public:
  DescriptorExports() = default;
  DescriptorExports(const DescriptorExports&) = delete;
  DescriptorExports& operator=(const DescriptorExports&) = delete;
  ~DescriptorExports();

  // The token of an earlier export of `source` (an allocation or a pool),
  // if any: one kept descriptor serves every export of it.
  bool find(proto::DescriptorKind kind, uint64_t source, proto::DescriptorToken* token);
  // Keeps `fd` (taken in every case) as the export of `source` by a session
  // of `owner`, answering importers as `sharing` says. Returns why not, or "".
  std::string add(proto::DescriptorKind kind, uint64_t source, int fd, const IpcOwner& owner, IpcSharing sharing,
                  proto::DescriptorToken* token);
  // Closes the descriptors kept for `source`.
  void drop(proto::DescriptorKind kind, uint64_t source);
  size_t size() const {
    std::lock_guard lock(mutex_);
    return exports_.size();
  }

 private:
  struct Export {
    proto::DescriptorKind kind;
    uint64_t source;
    uint64_t id;
    uint8_t secret[32];
    int fd;
    IpcOwner owner;
    IpcSharing sharing;
  };
  std::string listen();
  void serve();
  void answer(int peer);

  mutable std::mutex mutex_;
  std::vector<Export> exports_;
  uint64_t next_id_ = 1;
  int listener_ = -1;
  int stop_[2] = {-1, -1};
  std::string path_;
  std::thread server_;
};

// In an importing worker: the descriptor `token` names, asked of its
// exporting worker for a session of `importer`. Returns the descriptor
// (the caller's to close), or -1 with the reason in *why.
int fetch_exported_descriptor(const proto::DescriptorToken& token, const IpcOwner& importer, std::string* why);

}  // namespace rgpu::server
