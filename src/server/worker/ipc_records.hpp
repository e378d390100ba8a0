// CUDA IPC across workers. Each application process has a worker of its
// own, so an exported allocation or event is left as a record (a file, mode
// 0600) that another worker of the same server reads to import it. The
// handle the application sees carries this server's identity and a random
// 128-bit token, never a backend value.
//
// A token is a capability: whoever holds it may open the memory. So the
// records live in a directory only the server's user may list
// (prepare_ipc_directory), named by a hash of the token, never the token;
// and each record names its exporter (the session's client and job), so
// that by default only the same client and job may import it
// (--ipc-sharing).
#pragma once
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rgpu::server {

using IpcToken = std::array<uint8_t, 16>;

enum class IpcKind : uint8_t { memory = 1, event = 2 };

// Who may open a handle (--ipc-sharing): the exporter's client and job only,
// any session of its job (a session without a job: its client's), or any
// session of the server.
enum class IpcSharing : uint8_t { owner, job, server };

// A session as IPC sees it.
struct IpcOwner {
  std::string client;  // its client identity: "user UID" over the Unix socket, "host ADDRESS" over tcp
  std::string job;     // the job of its credential; empty: none
};

struct IpcRecord {
  IpcKind kind;
  uint64_t size;              // bytes of exported memory
  IpcOwner owner;             // the exporting session
  std::vector<uint8_t> blob;  // what the backend's import takes
};

// Whether `importer` may open what `exporter` exported.
bool may_import(IpcSharing sharing, const IpcOwner& exporter, const IpcOwner& importer);

// This server: the same in all its workers, different on another server.
uint64_t ipc_server_identity();

// The server's records directory unless --ipc-dir says otherwise: in
// /dev/shm, named for the server's user and port.
std::string default_ipc_directory(uint16_t port);
// At daemon start: creates `dir` with mode 0700, or takes it if it is a
// directory (not a symbolic link) of this user that nobody else may enter;
// removes what an earlier server on it left (a killed daemon's records);
// makes it where this process and the workers it forks keep records.
// Returns why it cannot, or "".
std::string prepare_ipc_directory(const std::string& dir);
// Where records are kept; empty: no directory prepared (IPC refused).
const std::string& ipc_directory();
// At daemon exit: removes the directory and what is in it (the workers go
// with the daemon).
void remove_ipc_directory();

// Writes a record under a new token; its path goes to `path`.
bool write_ipc_record(const IpcRecord& record, IpcToken* token, std::string* path);
std::optional<IpcRecord> read_ipc_record(const IpcToken& token);
// Every name a worker makes in the directory starts with this (the
// records, and the test backend's exported memory).
std::string ipc_name_prefix(pid_t worker);
// Removes the names a worker left (the daemon calls it once the worker
// has gone: one that was killed could not).
void remove_ipc_records_of(pid_t worker);

// The records a session wrote; they go with the session.
class IpcExports {
 public:
  IpcExports() = default;
  IpcExports(const IpcExports&) = delete;
  IpcExports& operator=(const IpcExports&) = delete;
  ~IpcExports();
  void add(std::string path);
  size_t size() const {
    std::lock_guard lock(mutex_);
    return paths_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> paths_;
};

}  // namespace rgpu::server
