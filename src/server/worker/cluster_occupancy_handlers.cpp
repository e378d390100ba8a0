// Occupancy questions that take a whole launch configuration (thread block
// clusters) or ask the other way round (shared memory left for n blocks).
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/launch_config.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

template <int32_t (Backend::*kQuery)(int*, Handle, const LaunchConfig&)>
int32_t cluster_query(SessionContext& s, Request& req, proto::Writer& out) {
  auto fn = req.args.get<uint64_t>();
  LaunchConfig cfg;
  if (int32_t e = read_launch_config(s, req.args, &cfg)) return e;
  if (int32_t e = read_launch_attributes(s, req.args, &cfg)) return e;
  req.args.expect_end();
  if (!s.functions.find(fn)) return cudaErrorInvalidDeviceFunction;
  int value = 0;
  if (int32_t e = (s.backend().*kQuery)(&value, fn, cfg)) return e;
  out.put<int32_t>(value);
  return cudaSuccess;
}

int32_t available_dynamic_smem(SessionContext& s, Request& req, proto::Writer& out) {
  auto fn = req.args.get<uint64_t>();
  auto blocks = req.args.get<int32_t>();
  auto block_size = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.functions.find(fn)) return cudaErrorInvalidDeviceFunction;
  size_t bytes = 0;
  if (int32_t e = s.backend().occupancy_available_dynamic_smem(&bytes, fn, blocks, block_size)) return e;
  out.put<uint64_t>(bytes);
  return cudaSuccess;
}

}  // namespace

void register_cluster_occupancy_handlers(Dispatcher& d) {
  d.add(proto::kOpOccupancyMaxActiveClusters, cluster_query<&Backend::occupancy_max_active_clusters>);
  d.add(proto::kOpOccupancyMaxPotentialClusterSize, cluster_query<&Backend::occupancy_max_potential_cluster_size>);
  d.add(proto::kOpOccupancyAvailableDynamicSMem, available_dynamic_smem);
}

}  // namespace rgpu::server
