#include "client/core/given_variables.hpp"

#include <algorithm>

namespace rgpu::client {

GivenVariables& GivenVariables::get() {
  static auto* g = new GivenVariables;
  return *g;
}

void GivenVariables::add(GivenVariable v) {
  std::lock_guard lock(mutex_);
  for (const GivenVariable& g : given_)
    if (g.device == v.device && g.address == v.address) return;
  given_.push_back(std::move(v));
}

void GivenVariables::forget(const void* owner) {
  std::lock_guard lock(mutex_);
  std::erase_if(given_, [&](const GivenVariable& g) { return g.owner == owner; });
}

std::vector<GivenVariable> GivenVariables::on_device(int device) const {
  std::lock_guard lock(mutex_);
  std::vector<GivenVariable> out;
  std::copy_if(given_.begin(), given_.end(), std::back_inserter(out),
               [&](const GivenVariable& g) { return g.device == device; });
  return out;
}

}  // namespace rgpu::client
