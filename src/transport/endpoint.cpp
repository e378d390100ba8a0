#include <string>

#include "transport/transport.hpp"

namespace rgpu::transport {

std::string Endpoint::to_string() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Endpoint Endpoint::parse(const std::string& text, uint16_t default_port) {
  Endpoint e;
  e.port = default_port;
  std::string rest;
  if (!text.empty() && text[0] == '[') {
    auto close = text.find(']');
    if (close == std::string::npos) throw TransportError("bad address '" + text + "'");
    e.host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
  } else {
    auto colon = text.find(':');
    e.host = text.substr(0, colon);
    if (colon != std::string::npos) rest = text.substr(colon);
  }
  if (!rest.empty()) {
    if (rest[0] != ':' || rest.size() == 1) throw TransportError("bad address '" + text + "'");
    size_t used = 0;
    unsigned long p = 0;
    try {
      p = std::stoul(rest.substr(1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != rest.size() - 1 || p == 0 || p > 65535)
      throw TransportError("bad port in '" + text + "'");
    e.port = static_cast<uint16_t>(p);
  }
  if (e.host.empty()) e.host = "localhost";
  return e;
}

}  // namespace rgpu::transport
