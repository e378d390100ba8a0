#include "cli/ls_command.hpp"

#include <cstdio>
#include <map>
#include <string>

#include "client/core/device_list.hpp"
#include "client/core/session.hpp"

namespace rgpu::cli {

int ls_command(int argc, char** argv) {
  std::vector<std::string> asked;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--server" && i + 1 < argc) {
      asked.push_back(argv[++i]);
    } else {
      fputs("usage: rgpu ls [--server HOST[:PORT]]...   (default: the servers in RGPU_DEVICES)\n",
            a == "--help" ? stdout : stderr);
      return a == "--help" ? 0 : 2;
    }
  }
  std::map<std::string, client::DeviceSpec> servers;
  try {
    const std::string transport = client::transport_from_environment();
    for (const auto& a : asked) {
      client::DeviceSpec d{transport::Endpoint::parse(a, client::default_port(transport)), 0, transport};
      servers[d.server_key()] = d;
    }
    if (asked.empty())
      for (const auto& d : client::device_list_from_environment()) servers[d.server_key()] = d;
  } catch (const std::exception& e) {
    fprintf(stderr, "rgpu ls: %s\n", e.what());
    return 2;
  }
  int failures = 0;
  for (const auto& [key, d] : servers) {
    std::string why;
    // A session asking for no GPU is a probe: the server lists what it exports.
    auto session = client::Session::open(d.server, d.transport, {}, &why);
    if (!session) {
      fprintf(stderr, "%s\n", why.c_str());
      ++failures;
      continue;
    }
    const auto& h = session->hello();
    printf("%s  backend %s, driver %d, runtime %d\n", session->server().to_string().c_str(), h.backend.c_str(),
           h.driver_version, h.runtime_version);
    for (const auto& g : h.gpus)
      printf("  gpu %d  %-40s %8.1f GiB free of %8.1f GiB\n", g.ordinal, g.name.c_str(),
             g.free_memory / 1073741824.0, g.total_memory / 1073741824.0);
  }
  return failures ? 1 : 0;
}

}  // namespace rgpu::cli
