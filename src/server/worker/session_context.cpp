#include "server/worker/session_context.hpp"

#include <algorithm>

namespace rgpu::server {

bool SessionContext::has_gpu(int ordinal) const {
  return std::find(gpus_.begin(), gpus_.end(), ordinal) != gpus_.end();
}

StagingPool& SessionContext::staging(int device) {
  auto& pool = staging_[device];
  if (!pool) pool = std::make_unique<StagingPool>(backend_);
  return *pool;
}

}  // namespace rgpu::server
