// The servers a pool command addresses: those named on its command line,
// else those in RGPU_DEVICES (rCUDA's variables too).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::cli {
// Nullopt, having printed "rgpu COMMAND: why", when a name or the device
// list is malformed.
std::optional<std::vector<transport::Endpoint>> servers_or_environment(const std::vector<std::string>& named,
                                                                       const char* command);
}
