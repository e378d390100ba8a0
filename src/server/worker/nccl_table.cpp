#include "server/worker/nccl_table.hpp"

#include <utility>

namespace rgpu::server {

bool NcclTable::room_for_one_more() const {
  std::lock_guard lock(mutex_);
  return comms_.size() < kMaxComms;
}

void NcclTable::add(uint64_t comm, NcclCommInfo info) {
  std::lock_guard lock(mutex_);
  comms_[comm] = std::move(info);
}

std::optional<NcclCommInfo> NcclTable::find(uint64_t comm) const {
  std::lock_guard lock(mutex_);
  auto it = comms_.find(comm);
  if (it == comms_.end()) return std::nullopt;
  return it->second;
}

bool NcclTable::remove(uint64_t comm) {
  std::lock_guard lock(mutex_);
  return comms_.erase(comm) != 0;
}

void NcclTable::note_refusal(std::string why) {
  std::lock_guard lock(mutex_);
  refusal_ = std::move(why);
}

std::string NcclTable::take_refusal() {
  std::lock_guard lock(mutex_);
  return std::exchange(refusal_, std::string());
}

void NcclTable::abort_all(NcclApi& nccl) {
  std::map<uint64_t, NcclCommInfo> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(comms_);
  }
  for (auto& [comm, info] : left) nccl.abort(comm);
}

}  // namespace rgpu::server
