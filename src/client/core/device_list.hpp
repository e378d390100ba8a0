// Which remote GPUs the application sees, in order: RGPU_DEVICES
// ("host[:port]:gpu,..."), else rCUDA's RCUDA_DEVICE_COUNT/RCUDA_DEVICE_<i>
// ("host[:port]:gpu"), else GPU 0 of localhost.
#pragma once
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::client {

struct DeviceSpec {
  transport::Endpoint server;
  int gpu = 0;
};

// Throws std::invalid_argument naming the bad entry.
std::vector<DeviceSpec> parse_device_list(const std::string& text);
std::vector<DeviceSpec> device_list_from_environment();

}  // namespace rgpu::client
