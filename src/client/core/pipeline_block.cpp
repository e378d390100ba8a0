#include "client/core/pipeline_block.hpp"

#include <cstdlib>
#include <stdexcept>

#include "common/log.hpp"

namespace rgpu::client {

uint32_t parse_pipeline_block(const std::string& text) {
  size_t used = 0;
  unsigned long long n = std::stoull(text, &used);
  std::string unit = text.substr(used);
  if (unit == "K" || unit == "k") n <<= 10;
  else if (unit == "M" || unit == "m") n <<= 20;
  else if (!unit.empty()) throw std::invalid_argument("unknown unit '" + unit + "'");
  if (n > UINT32_MAX) throw std::invalid_argument("too large");
  return static_cast<uint32_t>(n);
}

uint32_t pipeline_block_from_environment() {
  const char* v = std::getenv("RGPU_PIPELINE_BLOCK");
  if (!v || !*v) return 0;
  try {
    return parse_pipeline_block(v);
  } catch (const std::exception& e) {
    RGPU_LOG(warn, "ignoring RGPU_PIPELINE_BLOCK=%s: %s", v, e.what());
    return 0;
  }
}

}  // namespace rgpu::client
