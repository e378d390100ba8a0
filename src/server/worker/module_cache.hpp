// Fat binaries kept on disk by content hash, so a program's second session
// (in any worker) need not send them again. The server computes the hash of
// what it stores; a client's claimed hash only looks entries up.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rgpu::server {

class ModuleCache {
 public:
  explicit ModuleCache(std::string dir) : dir_(std::move(dir)) {}
  std::optional<std::vector<uint8_t>> find(const std::string& hash) const;
  // Stores the image under its computed hash and returns that hash.
  std::string store(std::span<const uint8_t> image) const;

 private:
  std::string dir_;
};

}  // namespace rgpu::server
