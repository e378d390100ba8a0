#include "server/worker/ipc_records.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "common/hex.hpp"
#include "protocol/codec.hpp"

namespace rgpu::server {
namespace {

constexpr char kMagic[8] = {'R', 'G', 'P', 'U', 'I', 'P', 'C', '2'};
constexpr size_t kMaxRecordBytes = 8192;

std::string& directory() {
  static std::string dir;
  return dir;
}

// A token starts with the writing worker's pid, so the daemon can remove
// what a killed worker left (remove_ipc_records_of); the rest is random.
// The name holds a hash of the token: whoever reads the directory (the
// server's user) learns no handle from it.
std::string record_path(const IpcToken& token) {
  uint32_t pid;
  std::memcpy(&pid, token.data(), sizeof pid);
  uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (!EVP_Digest(token.data(), token.size(), digest, &len, EVP_sha256(), nullptr)) return "";
  return directory() + "/" + ipc_name_prefix(static_cast<pid_t>(pid)) + hex({digest, 16});
}

// Removes the names starting with `prefix` in directory `dir`, which it
// closes; false if it cannot be read.
bool remove_names(int dir, const std::string& prefix) {
  DIR* d = fdopendir(dir);
  if (!d) {
    close(dir);
    return false;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0 &&
        std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
      names.emplace_back(e->d_name);
  for (const auto& name : names) unlinkat(dir, name.c_str(), 0);
  closedir(d);
  return true;
}

}  // namespace

bool may_import(IpcSharing sharing, const IpcOwner& exporter, const IpcOwner& importer) {
  switch (sharing) {
    case IpcSharing::server: return true;
    case IpcSharing::job:
      if (!exporter.job.empty()) return exporter.job == importer.job;
      [[fallthrough]];
    case IpcSharing::owner: return exporter.client == importer.client && exporter.job == importer.job;
  }
  return false;
}

// The host's name and the daemon's process (every worker's parent).
uint64_t ipc_server_identity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string key = std::string(host) + ":" + std::to_string(getppid());
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string default_ipc_directory(uint16_t port) {
  return "/dev/shm/rgpu-ipc-" + std::to_string(geteuid()) + "-" + std::to_string(port);
}

std::string prepare_ipc_directory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "cannot create " + dir + ": " + strerror(errno);
  // Not following a link: someone else may have made the name first.
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return dir + " is not a directory (a symbolic link?): " + strerror(errno);
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
    close(fd);
    return dir + " must be a directory of user " + std::to_string(geteuid()) +
           " that no one else may enter (mode 0700): remove it or give another --ipc-dir";
  }
  // Whatever is there an earlier server on this directory left: its
  // daemon, or workers, were killed.
  if (!remove_names(fd, "")) return "cannot read " + dir + ": " + strerror(errno);
  directory() = dir;
  return "";
}

const std::string& ipc_directory() { return directory(); }

void remove_ipc_directory() {
  if (directory().empty()) return;
  int fd = open(directory().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && remove_names(fd, "")) rmdir(directory().c_str());
  directory().clear();
}

bool write_ipc_record(const IpcRecord& record, IpcToken* token, std::string* path) {
  if (directory().empty()) return false;
  std::random_device random;
  const uint32_t pid = static_cast<uint32_t>(getpid());
  std::memcpy(token->data(), &pid, sizeof pid);
  for (size_t i = sizeof pid; i < token->size(); i += 4) {
    uint32_t r = random();
    std::memcpy(token->data() + i, &r, 4);
  }
  *path = record_path(*token);
  if (path->empty()) return false;
  proto::Writer w;
  w.put(kMagic).put(record.kind).put(record.size).put_string(record.owner.client).put_string(record.owner.job);
  w.put_bytes(record.blob.data(), record.blob.size());
  if (w.size() > kMaxRecordBytes) return false;
  int fd = open(path->c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = write(fd, w.bytes().data(), w.size()) == static_cast<ssize_t>(w.size());
  close(fd);
  if (!ok) unlink(path->c_str());
  return ok;
}

std::optional<IpcRecord> read_ipc_record(const IpcToken& token) {
  if (directory().empty()) return std::nullopt;
  std::string path = record_path(token);
  int fd = path.empty() ? -1 : open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<uint8_t> bytes(kMaxRecordBytes + 1);
  ssize_t n = read(fd, bytes.data(), bytes.size());
  close(fd);
  if (n <= 0 || static_cast<size_t>(n) > kMaxRecordBytes) return std::nullopt;
  try {
    proto::Reader r({bytes.data(), static_cast<size_t>(n)});
    auto magic = r.get<std::array<char, sizeof kMagic>>();
    if (std::memcmp(magic.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
    IpcRecord record;
    record.kind = r.get<IpcKind>();
    record.size = r.get<uint64_t>();
    record.owner.client = r.get_string();
    record.owner.job = r.get_string();
    auto blob = r.get_bytes();
    record.blob.assign(blob.begin(), blob.end());
    r.expect_end();
    return record;
  } catch (const proto::DecodeError&) {
    return std::nullopt;
  }
}

std::string ipc_name_prefix(pid_t worker) { return std::to_string(worker) + "-"; }

void remove_ipc_records_of(pid_t worker) {
  if (directory().empty()) return;
  int fd = open(directory().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) remove_names(fd, ipc_name_prefix(worker));
}

IpcExports::~IpcExports() {
  for (const auto& p : paths_) unlink(p.c_str());
}

void IpcExports::add(std::string path) {
  std::lock_guard lock(mutex_);
  paths_.push_back(std::move(path));
}

}  // namespace rgpu::server
