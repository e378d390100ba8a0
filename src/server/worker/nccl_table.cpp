#include "server/worker/nccl_table.hpp"

#include <nccl.h>

#include <condition_variable>
#include <future>
#include <thread>
#include <utility>

#include "common/log.hpp"

namespace rgpu::server {

struct NcclTable::Ends {
  std::mutex mutex;
  std::condition_variable finished;
  int running = 0;
  std::map<uint64_t, std::shared_future<void>> latest;  // by communicator
};

NcclTable::NcclTable() : ends_(std::make_shared<Ends>()) {}

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

void NcclTable::end_in_background(uint64_t comm, bool last, const char* what, std::function<int32_t()> end) {
  std::promise<void> done;
  std::shared_future<void> before;
  {
    std::lock_guard lock(ends_->mutex);
    auto it = ends_->latest.find(comm);
    if (it != ends_->latest.end()) before = it->second;
    if (last) {
      if (it != ends_->latest.end()) ends_->latest.erase(it);
    } else {
      ends_->latest[comm] = done.get_future().share();
    }
    ++ends_->running;
  }
  std::thread([ends = ends_, before, what, end = std::move(end), done = std::move(done)]() mutable {
    if (before.valid()) before.wait();
    if (int32_t r = end(); r != ncclSuccess) RGPU_LOG(warn, "NCCL %s of a communicator failed (ncclResult_t %d)", what, r);
    done.set_value();
    std::lock_guard lock(ends->mutex);
    --ends->running;
    ends->finished.notify_all();
  }).detach();
}

bool NcclTable::abort_all(NcclApi& nccl, std::chrono::seconds limit) {
  std::map<uint64_t, NcclCommInfo> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(comms_);
  }
  for (auto& [comm, info] : left) end_in_background(comm, true, "abort", [&nccl, comm = comm] { return nccl.abort(comm); });
  std::unique_lock lock(ends_->mutex);
  return ends_->finished.wait_for(lock, limit, [&] { return ends_->running == 0; });
}

}  // namespace rgpu::server
