#include "server/daemon/fd_passing.hpp"

#include <unistd.h>

#include <cerrno>
#include <deque>

#include "transport/socket/descriptor_passing.hpp"

namespace rgpu::server {

bool send_fd(int channel, int fd) {
  char byte = 'c';
  return transport::send_byte_with_descriptor(channel, &byte, fd);
}

int recv_fd(int channel) {
  char byte;
  std::deque<int> fds;
  ssize_t n;
  do {
    n = transport::receive_with_descriptors(channel, {&byte, 1}, fds);
  } while (n < 0 && errno == EINTR);
  if (n <= 0 || fds.empty()) {
    for (int fd : fds) close(fd);
    return -1;
  }
  for (size_t i = 1; i < fds.size(); ++i) close(fds[i]);
  return fds.front();
}

}  // namespace rgpu::server
