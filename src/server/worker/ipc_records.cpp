#include "server/worker/ipc_records.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

namespace rgpu::server {
namespace {

constexpr char kMagic[8] = {'R', 'G', 'P', 'U', 'I', 'P', 'C', '1'};
constexpr size_t kMaxBlob = 4096;

constexpr char kRecordDir[] = "/dev/shm";

// A token starts with the writing worker's pid, so the daemon can remove
// what a killed worker left (remove_ipc_records_of); the rest is random.
std::string record_path(const IpcToken& token) {
  static const char* hex = "0123456789abcdef";
  uint32_t pid;
  std::memcpy(&pid, token.data(), sizeof pid);
  std::string path = std::string(kRecordDir) + "/" + ipc_shm_prefix(static_cast<pid_t>(pid));
  for (size_t i = sizeof pid; i < token.size(); ++i) {
    path += hex[token[i] >> 4];
    path += hex[token[i] & 15];
  }
  return path;
}

}  // namespace

// The host's name and the daemon's process (every worker's parent).
uint64_t ipc_server_identity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string key = std::string(host) + ":" + std::to_string(getppid());
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return h;
}

bool write_ipc_record(const IpcRecord& record, IpcToken* token, std::string* path) {
  std::random_device random;
  const uint32_t pid = static_cast<uint32_t>(getpid());
  std::memcpy(token->data(), &pid, sizeof pid);
  for (size_t i = sizeof pid; i < token->size(); i += 4) {
    uint32_t r = random();
    std::memcpy(token->data() + i, &r, 4);
  }
  *path = record_path(*token);
  int fd = open(path->c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::vector<uint8_t> bytes(kMagic, kMagic + sizeof kMagic);
  bytes.push_back(static_cast<uint8_t>(record.kind));
  auto append = [&](const void* p, size_t n) {
    bytes.insert(bytes.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  };
  append(&record.size, sizeof record.size);
  uint32_t len = static_cast<uint32_t>(record.blob.size());
  append(&len, sizeof len);
  append(record.blob.data(), record.blob.size());
  bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  if (!ok) unlink(path->c_str());
  return ok;
}

std::optional<IpcRecord> read_ipc_record(const IpcToken& token) {
  int fd = open(record_path(token).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<uint8_t> bytes(sizeof kMagic + 1 + 8 + 4 + kMaxBlob + 1);
  ssize_t n = read(fd, bytes.data(), bytes.size());
  close(fd);
  constexpr size_t kHeader = sizeof kMagic + 1 + 8 + 4;
  if (n < static_cast<ssize_t>(kHeader) || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  IpcRecord r;
  r.kind = static_cast<IpcKind>(bytes[sizeof kMagic]);
  std::memcpy(&r.size, bytes.data() + sizeof kMagic + 1, 8);
  uint32_t len;
  std::memcpy(&len, bytes.data() + sizeof kMagic + 9, 4);
  if (len > kMaxBlob || static_cast<size_t>(n) != kHeader + len) return std::nullopt;
  r.blob.assign(bytes.begin() + kHeader, bytes.begin() + kHeader + len);
  return r;
}

std::string ipc_shm_prefix(pid_t worker) { return "rgpu-ipc-" + std::to_string(worker) + "-"; }

void remove_ipc_records_of(pid_t worker) {
  const std::string prefix = ipc_shm_prefix(worker);
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(kRecordDir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (it->path().filename().string().rfind(prefix, 0) == 0) unlink(it->path().c_str());
}

IpcExports::~IpcExports() {
  for (const auto& p : paths_) unlink(p.c_str());
}

void IpcExports::add(std::string path) {
  std::lock_guard lock(mutex_);
  paths_.push_back(std::move(path));
}

}  // namespace rgpu::server
