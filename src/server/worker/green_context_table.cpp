#include "server/worker/green_context_table.hpp"

#include <cstring>

namespace rgpu::server {

uint64_t GreenContextTable::add_resource(const CUdevResource& r, CUdevResource* client_copy) {
  std::string bytes(reinterpret_cast<const char*>(&r), sizeof r);
  uint64_t token;
  {
    std::lock_guard lock(mutex_);
    auto it = token_of_.find(bytes);
    if (it != token_of_.end()) {
      token = it->second;
    } else {
      if (resources_.size() >= kMaxResources) return 0;
      token = next_token_++;
      token_of_.emplace(std::move(bytes), token);
      resources_.emplace(token, r);
    }
  }
  *client_copy = r;
  std::memset(client_copy->_internal_padding, 0, sizeof client_copy->_internal_padding);
  std::memcpy(client_copy->_internal_padding, &token, sizeof token);
  return token;
}

bool GreenContextTable::find_resource(uint64_t token, CUdevResource* out) const {
  std::lock_guard lock(mutex_);
  auto it = resources_.find(token);
  if (it == resources_.end()) return false;
  *out = it->second;
  return true;
}

uint16_t GreenContextTable::add_green(Green g) {
  std::lock_guard lock(mutex_);
  // Next fit: a destroyed context's slot is taken again as late as possible,
  // so a stale slot a thread still names rarely lands in a new context.
  for (uint16_t i = 0; i < kSlots; ++i) {
    uint16_t slot = static_cast<uint16_t>((last_slot_ + i) % kSlots + 1);
    if (greens_[slot].handle == 0) {
      greens_[slot] = g;
      last_slot_ = slot;
      return slot;
    }
  }
  return 0;
}

bool GreenContextTable::find_green(uint16_t slot, Green* out) const {
  if (slot == 0 || slot > kSlots) return false;
  std::lock_guard lock(mutex_);
  if (greens_[slot].handle == 0) return false;
  *out = greens_[slot];
  return true;
}

bool GreenContextTable::remove_green(uint16_t slot) {
  if (slot == 0 || slot > kSlots) return false;
  std::lock_guard lock(mutex_);
  if (greens_[slot].handle == 0) return false;
  greens_[slot] = {};
  return true;
}

uint16_t GreenContextTable::slot_of(uint64_t handle) const {
  if (handle == 0) return 0;
  std::lock_guard lock(mutex_);
  for (uint16_t slot = 1; slot <= kSlots; ++slot)
    if (greens_[slot].handle == handle) return slot;
  return 0;
}

}  // namespace rgpu::server
