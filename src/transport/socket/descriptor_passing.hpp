// Passing open descriptors over Unix sockets (SCM_RIGHTS): used by the shm
// transport and by the daemon handing connections to workers.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <deque>

namespace rgpu::transport {

// Sends `len` bytes of `data` (a few: they must leave in one piece) with
// descriptor `fd` attached; true on success.
bool send_with_descriptor(int socket, const void* data, size_t len, int fd);
// Sends one byte of `data` with descriptor `fd` attached; true on success.
inline bool send_byte_with_descriptor(int socket, const void* data, int fd) {
  return send_with_descriptor(socket, data, 1, fd);
}
// recvmsg() into `into`, appending any descriptors that came with the data
// to `fds`. Returns what recvmsg returned; `flags` go to recvmsg.
ssize_t receive_with_descriptors(int socket, iovec into, std::deque<int>& fds, int flags = 0);

}  // namespace rgpu::transport
