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

}  // namespace rgpu::server
