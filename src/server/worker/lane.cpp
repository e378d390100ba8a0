#include "server/worker/lane.hpp"

namespace rgpu::server {

StagingPool& Lane::staging(Backend& backend, MemoryLimit& limit, int device, uint64_t reset_epoch) {
  DeviceStaging& d = staging_[device];
  if (d.pool && d.epoch != reset_epoch) d.pool->abandon();
  if (!d.pool || d.epoch != reset_epoch) d.pool = std::make_unique<StagingPool>(backend, limit);
  d.epoch = reset_epoch;
  return *d.pool;
}

}  // namespace rgpu::server
