#include "host_test_backend.hpp"

#include <stdexcept>

#include "common/log.hpp"
#include "server/backend/host/host_backend.hpp"

namespace rgpu::fuzz {

server::Backend& host_test_backend() {
  static server::Backend& backend = [] () -> server::Backend& {
    // Every refused input would log a line: only errors are worth seeing.
    log::set_level(log::Level::error);
    auto* b = server::make_host_test_backend().release();
    if (b->init({0, 1}) != cudaSuccess) throw std::runtime_error("host-test backend refused GPUs 0 and 1");
    return *b;
  }();
  return backend;
}

void reset_host_test_backend() {
  server::Backend& b = host_test_backend();
  for (int device : {0, 1})
    if (b.set_device(device) == cudaSuccess) b.device_reset();
}

}  // namespace rgpu::fuzz
