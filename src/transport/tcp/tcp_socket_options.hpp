// Options every rgpu TCP socket gets.
#pragma once

namespace rgpu::transport {

// No Nagle delay (latency matters more than segment count for small calls),
// and keepalive so a vanished peer becomes an error within seconds.
void tune_tcp_socket(int fd);

}  // namespace rgpu::transport
