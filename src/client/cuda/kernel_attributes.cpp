#include "client/cuda/kernel_attributes.hpp"

#include <initializer_list>

#include "client/core/call.hpp"
#include "client/cuda/kernel_launcher.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

// Routes `call` to `device`, finds the kernel's server handle there and
// puts it first among the call's arguments.
cudaError_t to_kernel(Call& call, const void* kernel, int device, uint64_t* function) {
  if (!known_kernel(kernel)) return cudaErrorInvalidDeviceFunction;
  int32_t remote;
  if (cudaError_t e = call.to_device(device, &remote)) return e;
  const LoadedKernel* lk;
  if (cudaError_t e = resolve_kernel(kernel, device, &lk)) return e;
  *function = lk->function;
  call.args().put<uint64_t>(*function);
  return cudaSuccess;
}

// A setter: the kernel's kept answers there are forgotten whatever the
// outcome, since a failed call may have changed something first.
cudaError_t change(uint16_t op, const void* kernel, int device, std::initializer_list<int32_t> args) {
  Call call(op);
  uint64_t function;
  if (cudaError_t e = to_kernel(call, kernel, device, &function)) return e;
  for (int32_t a : args) call.args().put(a);
  cudaError_t e = call.run();
  FunctionAttributeCache::get().forget_function(device, function);
  return e;
}

}  // namespace

cudaError_t kernel_attributes(const void* kernel, int device, cudaFuncAttributes* out) {
  Call call(proto::kOpFuncGetAttributes);
  uint64_t function;
  if (cudaError_t e = to_kernel(call, kernel, device, &function)) return e;
  return FunctionAttributeCache::get().attributes(device, function, out, [&](cudaFuncAttributes* a) {
    cudaError_t e = call.quiet().run();
    if (e == cudaSuccess) *a = call.reply().get<cudaFuncAttributes>();
    return e;
  });
}

cudaError_t kernel_occupancy(const void* kernel, int device, const OccupancyQuery& q, int* blocks) {
  Call call(proto::kOpOccupancyMaxActiveBlocks);
  uint64_t function;
  if (cudaError_t e = to_kernel(call, kernel, device, &function)) return e;
  return FunctionAttributeCache::get().occupancy(device, function, q, blocks, [&](int* b) {
    call.args().put<int32_t>(q.block_size).put<uint64_t>(q.dynamic_shared).put<uint32_t>(q.flags);
    cudaError_t e = call.quiet().run();
    if (e == cudaSuccess) *b = call.reply().get<int32_t>();
    return e;
  });
}

cudaError_t kernel_available_dynamic_smem(const void* kernel, int device, int num_blocks, int block_size,
                                          size_t* bytes) {
  Call call(proto::kOpOccupancyAvailableDynamicSMem);
  uint64_t function;
  if (cudaError_t e = to_kernel(call, kernel, device, &function)) return e;
  call.args().put<int32_t>(num_blocks).put<int32_t>(block_size);
  cudaError_t e = call.quiet().run();
  if (e == cudaSuccess) *bytes = call.reply().get<uint64_t>();
  return e;
}

cudaError_t set_kernel_attribute(const void* kernel, int device, int32_t attribute, int32_t value) {
  cudaError_t e = change(proto::kOpFuncSetAttribute, kernel, device, {attribute, value});
  if (e == cudaSuccess && attribute == cudaFuncAttributeMaxDynamicSharedMemorySize)
    note_max_dynamic_shared(kernel, device, value);
  return e;
}

cudaError_t set_kernel_cache_config(const void* kernel, int device, int32_t config) {
  return change(proto::kOpFuncSetCacheConfig, kernel, device, {config});
}

cudaError_t set_kernel_shared_mem_config(const void* kernel, int device, int32_t config) {
  return change(proto::kOpFuncSetSharedMemConfig, kernel, device, {config});
}

}  // namespace rgpu::client
