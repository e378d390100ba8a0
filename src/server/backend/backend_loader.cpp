// Picks the backend by name. The CUDA backend is a separate module so that
// the daemon and the test backend never load (or need) a GPU driver.
#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "common/executable_dir.hpp"
#include "server/backend/backend.hpp"
#include "server/backend/host/host_backend.hpp"

namespace rgpu::server {

std::unique_ptr<Backend> make_backend(const std::string& name, std::string* error) {
  if (name == "host-test") return make_host_test_backend();
  if (name != "cuda") {
    *error = "unknown backend (cuda or host-test)";
    return nullptr;
  }
  std::string path = executable_dir() + "/librgpu-backend-cuda.so";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *error = dlerror();
    return nullptr;
  }
  auto make = reinterpret_cast<Backend* (*)()>(dlsym(lib, "rgpu_make_cuda_backend"));
  if (!make) {
    *error = "librgpu-backend-cuda.so has no rgpu_make_cuda_backend";
    return nullptr;
  }
  return std::unique_ptr<Backend>(make());
}

}  // namespace rgpu::server
