#include "server/worker/module_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <tuple>

#include "fatbin/fatbin_hash.hpp"

namespace rgpu::server {
namespace {

// Hashes name files: anything but short hex could escape the directory.
bool is_hash(const std::string& h) {
  return !h.empty() && h.size() <= 64 &&
         std::all_of(h.begin(), h.end(), [](unsigned char c) { return std::isxdigit(c); });
}

// All n bytes through `io` (read or write), retried after signals.
template <typename Io, typename Byte>
bool all_bytes(Io io, int fd, Byte* p, size_t n) {
  while (n) {
    ssize_t done = io(fd, p, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return false;
    p += done;
    n -= static_cast<size_t>(done);
  }
  return true;
}

bool write_all(int fd, const uint8_t* p, size_t n) { return all_bytes(::write, fd, p, n); }
bool read_all(int fd, uint8_t* p, size_t n) { return all_bytes(::read, fd, p, n); }

}  // namespace

bool ModuleCache::prepare_directory(const std::string& dir, std::string* why) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *why = strerror(errno);
    return false;
  }
  // One made by someone else (the default is under /tmp) could be read or
  // filled by them: the cache is the server user's alone or off.
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    *why = strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) *why = "not a directory (or a symbolic link)";
  else if (st.st_uid != geteuid()) *why = "owned by uid " + std::to_string(st.st_uid) + ", not this server's user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) *why = "writable by its group or others";
  else if (access(dir.c_str(), W_OK) != 0) *why = strerror(errno);
  return why->empty();
}

std::optional<std::vector<uint8_t>> ModuleCache::find(const std::string& hash,
                                                      const std::function<bool(uint64_t)>& reserve) const {
  if (dir_.empty() || !is_hash(hash)) return std::nullopt;
  int fd = open((dir_ + "/" + hash + ".fatbin").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::vector<uint8_t>> found;
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && reserve(static_cast<uint64_t>(st.st_size))) {
    std::vector<uint8_t> image(static_cast<size_t>(st.st_size));
    // A damaged or planted file must not load under a hash it does not have.
    if (read_all(fd, image.data(), image.size()) &&
        fatbin::fatbin_hash({reinterpret_cast<const std::byte*>(image.data()), image.size()}) == hash) {
      futimens(fd, nullptr);  // recently used: trimmed last
      found = std::move(image);
    }
  }
  close(fd);
  return found;
}

std::string ModuleCache::store(std::span<const uint8_t> image) const {
  std::string hash = fatbin::fatbin_hash({reinterpret_cast<const std::byte*>(image.data()), image.size()});
  if (dir_.empty() || (max_bytes_ && image.size() > max_bytes_)) return hash;
  static std::atomic<uint64_t> serial{0};
  std::string final_path = dir_ + "/" + hash + ".fatbin";
  std::string tmp = final_path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(serial++);
  // A new file only: a name planted there (a link, a file) makes this store fail, never writes through it.
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return hash;
  bool ok = write_all(fd, image.data(), image.size());
  ok = close(fd) == 0 && ok;
  // rename() is atomic: concurrent workers never see half a file.
  if (!ok || rename(tmp.c_str(), final_path.c_str()) != 0) {
    unlink(tmp.c_str());
    return hash;
  }
  trim();
  return hash;
}

void ModuleCache::trim() const {
  if (!max_bytes_) return;
  DIR* d = opendir(dir_.c_str());
  if (!d) return;
  // Every file counts, other workers' half-written ones too (they are the
  // newest, so go last).
  std::vector<std::tuple<timespec, uint64_t, std::string>> files;
  uint64_t total = 0;
  while (dirent* e = readdir(d)) {
    struct stat st {};
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode)) continue;
    files.emplace_back(st.st_mtim, static_cast<uint64_t>(st.st_size), e->d_name);
    total += static_cast<uint64_t>(st.st_size);
  }
  if (total > max_bytes_) {
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
      const timespec &x = std::get<0>(a), &y = std::get<0>(b);
      return x.tv_sec != y.tv_sec ? x.tv_sec < y.tv_sec : x.tv_nsec < y.tv_nsec;
    });
    for (const auto& [when, size, name] : files) {
      if (total <= max_bytes_) break;
      if (unlinkat(dirfd(d), name.c_str(), 0) == 0) total -= size;
    }
  }
  closedir(d);
}

}  // namespace rgpu::server
