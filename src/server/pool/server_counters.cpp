#include "server/pool/server_counters.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace rgpu::server {

ServerCounters::ServerCounters() {
  void* p = mmap(nullptr, sizeof(Region), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("cannot map the server counters: ") + strerror(errno));
  region_ = new (p) Region{};
}

ServerCounters::~ServerCounters() { munmap(region_, sizeof(Region)); }

void ServerCounters::set_bus_id(int gpu, const std::string& id) {
  if (gpu < 0 || gpu >= kLedgerGpus || id.size() >= sizeof region_->bus_ids[gpu]) return;
  // Every worker writes the same text, so a concurrent reader sees it whole
  // or empty.
  std::memcpy(region_->bus_ids[gpu], id.c_str(), id.size() + 1);
}

std::string ServerCounters::bus_id(int gpu) const {
  if (gpu < 0 || gpu >= kLedgerGpus) return "";
  const char* id = region_->bus_ids[gpu];
  return std::string(id, strnlen(id, sizeof region_->bus_ids[gpu]));
}

const char* sharing_state_name(SharingState s) {
  switch (s) {
    case SharingState::mps: return "mps";
    case SharingState::timeslice_fallback: return "timeslice-fallback";
    case SharingState::timeslice: break;
  }
  return "timeslice";
}

void ServerCounters::set_gpu_sharing(int gpu, SharingState s) {
  if (gpu >= 0 && gpu < kLedgerGpus) region_->gpu_sharing[gpu].store(static_cast<uint8_t>(s), std::memory_order_relaxed);
}

SharingState ServerCounters::gpu_sharing(int gpu) const {
  if (gpu < 0 || gpu >= kLedgerGpus) return SharingState::timeslice;
  return static_cast<SharingState>(region_->gpu_sharing[gpu].load(std::memory_order_relaxed));
}

}  // namespace rgpu::server
