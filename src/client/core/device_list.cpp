#include "client/core/device_list.hpp"

#include <cstdlib>
#include <stdexcept>

#include "protocol/wire.hpp"

namespace rgpu::client {
namespace {

// "host:gpu", "host:port:gpu", "[v6]:port:gpu": the GPU is the last field.
DeviceSpec parse_entry(const std::string& entry) {
  auto colon = entry.rfind(':');
  if (colon == std::string::npos || colon + 1 == entry.size() ||
      entry.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    throw std::invalid_argument("device entry '" + entry + "' is not host[:port]:gpu");
  DeviceSpec d;
  d.gpu = std::stoi(entry.substr(colon + 1));
  try {
    d.server = transport::Endpoint::parse(entry.substr(0, colon), proto::kDefaultPort);
  } catch (const transport::TransportError& e) {
    throw std::invalid_argument(e.what());
  }
  return d;
}

}  // namespace

std::vector<DeviceSpec> parse_device_list(const std::string& text) {
  std::vector<DeviceSpec> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string entry = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!entry.empty()) out.push_back(parse_entry(entry));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<DeviceSpec> device_list_from_environment() {
  if (const char* v = std::getenv("RGPU_DEVICES"); v && *v) return parse_device_list(v);
  if (const char* count = std::getenv("RCUDA_DEVICE_COUNT"); count && *count) {
    std::vector<DeviceSpec> out;
    int n = std::atoi(count);
    for (int i = 0; i < n; ++i) {
      std::string key = "RCUDA_DEVICE_" + std::to_string(i);
      const char* v = std::getenv(key.c_str());
      if (!v) throw std::invalid_argument(key + " is not set but RCUDA_DEVICE_COUNT=" + count);
      out.push_back(parse_entry(v));
    }
    return out;
  }
  return {DeviceSpec{transport::Endpoint{"localhost", proto::kDefaultPort}, 0}};
}

}  // namespace rgpu::client
