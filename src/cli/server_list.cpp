#include "cli/server_list.hpp"

#include <cstdio>
#include <set>
#include <stdexcept>

#include "client/core/device_list.hpp"
#include "protocol/wire.hpp"

namespace rgpu::cli {

std::optional<std::vector<transport::Endpoint>> servers_or_environment(const std::vector<std::string>& named,
                                                                       const char* command) {
  std::set<std::string> seen;
  std::vector<transport::Endpoint> out;
  auto add = [&](const transport::Endpoint& e) {
    if (seen.insert(e.to_string()).second) out.push_back(e);
  };
  try {
    for (const auto& n : named) add(transport::Endpoint::parse(n, proto::kDefaultPort));
    if (named.empty())
      for (const auto& d : client::device_list_from_environment()) add(d.server);
  } catch (const std::exception& e) {
    fprintf(stderr, "rgpu %s: %s\n", command, e.what());
    return std::nullopt;
  }
  return out;
}

}  // namespace rgpu::cli
