#include "client/core/unsupported.hpp"

#include <mutex>
#include <set>
#include <string>

#include "client/core/api_guard.hpp"
#include "common/log.hpp"

namespace rgpu::client {

cudaError_t unsupported(const char* name) {
  static std::mutex mutex;
  static auto* logged = new std::set<std::string>;  // never destroyed: exit handlers call in
  {
    std::lock_guard lock(mutex);
    if (logged->insert(name).second) RGPU_LOG(warn, "%s is not supported by rgpu yet", name);
  }
  return record_error(cudaErrorNotSupported);
}

}  // namespace rgpu::client
