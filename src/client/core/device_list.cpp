#include "client/core/device_list.hpp"

#include <cstdlib>
#include <stdexcept>

#include "protocol/wire.hpp"

namespace rgpu::client {
namespace {

std::string checked_transport(const std::string& name, const std::string& where) {
  if (name.empty() || name == "tcp" || name == "shm" || name == "tls" || name == "ucx") return name;
  throw std::invalid_argument(where + ": transport must be tcp, shm, tls or ucx, not '" + name + "'");
}

// "host:gpu", "host:port:gpu", "[v6]:port:gpu", each optionally after
// "tcp://", "shm://", "tls://" or "ucx://": the GPU is the last field.
DeviceSpec parse_entry(std::string entry, const std::string& transport) {
  DeviceSpec d;
  d.transport = transport;
  if (auto scheme = entry.find("://"); scheme != std::string::npos) {
    d.transport = checked_transport(entry.substr(0, scheme), "device entry '" + entry + "'");
    entry.erase(0, scheme + 3);
  }
  auto colon = entry.rfind(':');
  if (colon == std::string::npos || colon + 1 == entry.size() ||
      entry.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    throw std::invalid_argument("device entry '" + entry + "' is not [transport://]host[:port]:gpu");
  d.gpu = std::stoi(entry.substr(colon + 1));
  try {
    d.server = transport::Endpoint::parse(entry.substr(0, colon), default_port(d.transport));
  } catch (const transport::TransportError& e) {
    throw std::invalid_argument(e.what());
  }
  return d;
}

}  // namespace

std::string DeviceSpec::server_key() const {
  return (transport.empty() ? "" : transport + "://") + server.to_string();
}

std::string transport_from_environment() {
  const char* v = std::getenv("RGPU_TRANSPORT");
  return checked_transport(v ? v : "", "RGPU_TRANSPORT");
}

uint16_t default_port(const std::string& transport) {
  return transport == "ucx" ? proto::kDefaultUcxPort : proto::kDefaultPort;
}

std::vector<DeviceSpec> parse_device_list(const std::string& text, const std::string& transport) {
  std::vector<DeviceSpec> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string entry = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!entry.empty()) out.push_back(parse_entry(entry, transport));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<DeviceSpec> device_list_from_environment() {
  const std::string transport = transport_from_environment();
  if (const char* v = std::getenv("RGPU_DEVICES"); v && *v) return parse_device_list(v, transport);
  if (const char* count = std::getenv("RCUDA_DEVICE_COUNT"); count && *count) {
    std::vector<DeviceSpec> out;
    int n = std::atoi(count);
    for (int i = 0; i < n; ++i) {
      std::string key = "RCUDA_DEVICE_" + std::to_string(i);
      const char* v = std::getenv(key.c_str());
      if (!v) throw std::invalid_argument(key + " is not set but RCUDA_DEVICE_COUNT=" + count);
      out.push_back(parse_entry(v, transport));
    }
    return out;
  }
  return {DeviceSpec{transport::Endpoint{"localhost", default_port(transport)}, 0, transport}};
}

}  // namespace rgpu::client
