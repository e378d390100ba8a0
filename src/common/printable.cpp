#include "common/printable.hpp"

#include <algorithm>
#include <cstdio>

namespace rgpu {

std::string printable(std::string_view text, size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max) + 3);
  for (unsigned char c : text) {
    char escaped[5];
    const bool plain = c >= 0x20 && c < 0x7f && c != '\\';
    if (!plain) std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
    const std::string_view piece = plain ? std::string_view(reinterpret_cast<const char*>(&c), 1) : escaped;
    if (out.size() + piece.size() > max) {
      out += "...";
      break;
    }
    out += piece;
  }
  return out;
}

}  // namespace rgpu
