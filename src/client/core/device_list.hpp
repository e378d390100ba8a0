// Which remote GPUs the application sees, in order: RGPU_DEVICES
// ("[transport://]host[:port]:gpu,..."), else rCUDA's
// RCUDA_DEVICE_COUNT/RCUDA_DEVICE_<i> ("host[:port]:gpu"), else GPU 0 of
// localhost. An entry without a transport takes RGPU_TRANSPORT's.
#pragma once
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::client {

struct DeviceSpec {
  transport::Endpoint server;
  int gpu = 0;
  // "tcp", "shm", "tls" or "ucx"; empty: shm when the server is on this host, else tcp.
  std::string transport;
  // The server as this client reaches it ("ucx://host:port"; "host:port"
  // for the automatic choice).
  std::string server_key() const;
};

// RGPU_TRANSPORT: empty, tcp, shm, tls or ucx; throws std::invalid_argument.
std::string transport_from_environment();
// The server's port when an entry names none: a ucx server's own port, or
// the server's main one.
uint16_t default_port(const std::string& transport);

// Throws std::invalid_argument naming the bad entry.
std::vector<DeviceSpec> parse_device_list(const std::string& text, const std::string& transport = "");
std::vector<DeviceSpec> device_list_from_environment();

}  // namespace rgpu::client
