// `rgpu-server --drain [--port N]`: finds the rgpu-server daemon of this
// host that listens on the port (as `ss -ltnp` would: /proc's TCP tables,
// then which process holds the socket), sends it SIGUSR1 (WorkerPool::drain)
// and waits until it has stopped, saying so.
#pragma once

namespace rgpu::server {

// Exit status: 0 once the daemon stopped; 1 when none was found or it could
// not be told.
int drain_running_server(int port);

}  // namespace rgpu::server
