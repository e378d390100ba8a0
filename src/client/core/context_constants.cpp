#include "client/core/context_constants.hpp"

namespace rgpu::client {

ContextConstants& ContextConstants::get() {
  // Never destroyed: libraries ask from their exit handlers.
  static auto* constants = new ContextConstants;
  return *constants;
}

void ContextConstants::forget_device(int device) {
  kept_.forget_if([&](const Key& k) { return std::get<0>(k) == device; });
}

}  // namespace rgpu::client
