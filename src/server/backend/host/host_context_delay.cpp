#include "server/backend/host/host_context_delay.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace rgpu::server {

void host_test_context_delay() {
  const char* ms = std::getenv("RGPU_HOST_TEST_START_MS");
  if (!ms) return;
  // The server's own executable is the lock all its workers share; the lock
  // goes with the process, however it ends.
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) flock(fd, LOCK_EX);
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
  if (fd >= 0) close(fd);
}

}  // namespace rgpu::server
