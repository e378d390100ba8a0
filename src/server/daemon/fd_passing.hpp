// Handing an accepted connection's descriptor to a worker process over a
// Unix socket (SCM_RIGHTS).
#pragma once

namespace rgpu::server {

bool send_fd(int channel, int fd);
// Returns the received descriptor, or -1 when the channel closed.
int recv_fd(int channel);

}  // namespace rgpu::server
