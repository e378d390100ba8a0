// Fat binaries kept on disk by content hash, so a program's second session
// (in any worker) need not send them again. The server computes the hash of
// what it stores; a client's claimed hash only looks entries up. Only
// images the backend loaded are stored (module_functions.hpp). The
// directory is the server user's alone (prepare_directory), files are
// written 0600 without following links, and the directory holds at most its
// quota: past it the least recently used entries go.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rgpu::server {

class ModuleCache {
 public:
  // `dir` empty: no cache. `max_bytes`: the directory's quota (0: none).
  ModuleCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  // Makes `dir` (mode 0700) or checks the one there: a directory, not a
  // link, owned by this user and writable by no one else. False with *why
  // when it is not: the cache is then off.
  static bool prepare_directory(const std::string& dir, std::string* why);
  // The image stored under `hash`, read only when `reserve` accepts its
  // size (the caller holds it against a limit); nullopt when none is.
  std::optional<std::vector<uint8_t>> find(const std::string& hash,
                                           const std::function<bool(uint64_t)>& reserve) const;
  // Stores the image under its computed hash and returns that hash.
  std::string store(std::span<const uint8_t> image) const;

 private:
  // Removes the least recently used entries until the directory holds no
  // more than its quota.
  void trim() const;

  std::string dir_;
  uint64_t max_bytes_;
};

}  // namespace rgpu::server
