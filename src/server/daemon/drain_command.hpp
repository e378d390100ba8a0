// `rgpu-server --drain [--port N]`: finds the rgpu-server daemon of this
// host that listens on the port (as `ss -ltnp` would: /proc's TCP tables,
// then which process holds the socket), sends it SIGUSR1 (WorkerPool::drain)
// and waits until it has stopped, saying so.
#pragma once
#include <string>

namespace rgpu::server {

// With `move_to`, every session is first asked to move there (`rgpu
// migrate --all` on `address`:`port`, with the job key in `job_key_file`);
// those that stay run to their end. Exit status: 0 once the daemon stopped;
// 1 when none was found or it could not be told.
int drain_running_server(int port, const std::string& address = "", const std::string& move_to = "",
                         const std::string& job_key_file = "");

}  // namespace rgpu::server
