// The memory pools the application made (cudaMemPoolCreate), with the
// properties it made them with: a session move makes each again on the
// target (docs/migration.md). Imported pools are not here.
#pragma once
#include <cuda_runtime_api.h>

#include <optional>

namespace rgpu::client::made_pools {

void remember(cudaMemPool_t pool, const cudaMemPoolProps& props);
void forget(cudaMemPool_t pool);
std::optional<cudaMemPoolProps> props(cudaMemPool_t pool);

}  // namespace rgpu::client::made_pools
