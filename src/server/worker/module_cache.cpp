#include "server/worker/module_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>

#include "fatbin/fatbin_hash.hpp"

namespace rgpu::server {
namespace {

// Hashes name files: anything but short hex could escape the directory.
bool is_hash(const std::string& h) {
  return !h.empty() && h.size() <= 64 &&
         std::all_of(h.begin(), h.end(), [](unsigned char c) { return std::isxdigit(c); });
}

}  // namespace

std::optional<std::vector<uint8_t>> ModuleCache::find(const std::string& hash) const {
  if (dir_.empty() || !is_hash(hash)) return std::nullopt;
  std::ifstream in(dir_ + "/" + hash + ".fatbin", std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A damaged or planted file must not load under a hash it does not have.
  if (fatbin::fatbin_hash({reinterpret_cast<const std::byte*>(image.data()), image.size()}) != hash)
    return std::nullopt;
  return image;
}

std::string ModuleCache::store(std::span<const uint8_t> image) const {
  std::string hash = fatbin::fatbin_hash({reinterpret_cast<const std::byte*>(image.data()), image.size()});
  if (dir_.empty()) return hash;
  std::string final_path = dir_ + "/" + hash + ".fatbin";
  std::string tmp = final_path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    if (!out) {
      unlink(tmp.c_str());
      return hash;
    }
  }
  // rename() is atomic: concurrent workers never see half a file.
  if (rename(tmp.c_str(), final_path.c_str()) != 0) unlink(tmp.c_str());
  return hash;
}

}  // namespace rgpu::server
