// The servers a pool command addresses: those named on its command line,
// else those in RGPU_DEVICES (rCUDA's variables too).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::cli {
// Throws std::invalid_argument when the device list is malformed.
std::vector<transport::Endpoint> servers_or_environment(const std::vector<std::string>& named);
}
