#include "server/worker/host_node_records.hpp"

namespace rgpu::server {

uint64_t HostNodeRecords::record(uint64_t id, const CallbackStaging& staging) {
  std::lock_guard lock(mutex_);
  auto& r = records_[{id, staging.block, staging.bytes, staging.upload}];
  if (!r) r = std::make_unique<Record>(Record{&callbacks_, id, staging});
  return reinterpret_cast<uint64_t>(r.get());
}

uint64_t HostNodeRecords::id(uint64_t record) { return reinterpret_cast<const Record*>(record)->id; }

void HostNodeRecords::run(uint64_t record) {
  const auto* r = reinterpret_cast<const Record*>(record);
  // Graph work is never behind a background copy of the client's: nothing to wait for.
  r->callbacks->run(r->id, 0, r->staging);
}

}  // namespace rgpu::server
