// CUDA IPC across workers. Each application process has a worker of its
// own, so an exported allocation or event is left as a record (a file in
// /dev/shm, mode 0600, named by a random 128-bit token) that another worker
// of the same server reads to import it. The handle the application sees
// carries this server's identity and the token, never a backend value.
#pragma once
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <sys/types.h>
#include <string>
#include <vector>

namespace rgpu::server {

using IpcToken = std::array<uint8_t, 16>;

enum class IpcKind : uint8_t { memory = 1, event = 2 };

struct IpcRecord {
  IpcKind kind;
  uint64_t size;              // bytes of exported memory
  std::vector<uint8_t> blob;  // what the backend's import takes
};

// This server: the same in all its workers, different on another server.
uint64_t ipc_server_identity();

// Writes a record under a new token; the path goes to `path`.
bool write_ipc_record(const IpcRecord& record, IpcToken* token, std::string* path);
std::optional<IpcRecord> read_ipc_record(const IpcToken& token);
// Every /dev/shm name a worker makes for IPC starts with this (the
// records, and the test backend's exported memory).
std::string ipc_shm_prefix(pid_t worker);
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

 private:
  std::mutex mutex_;
  std::vector<std::string> paths_;
};

}  // namespace rgpu::server
