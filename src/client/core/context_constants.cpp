#include "client/core/context_constants.hpp"

#include <algorithm>

namespace rgpu::client {

ContextConstants& ContextConstants::get() {
  // Never destroyed: libraries ask from their exit handlers.
  static auto* constants = new ContextConstants;
  return *constants;
}

void ContextConstants::forget_device(int device) {
  std::lock_guard lock(mutex_);
  ++generation_;
  std::erase_if(values_, [&](const auto& v) { return std::get<0>(v.first) == device; });
}

}  // namespace rgpu::client
