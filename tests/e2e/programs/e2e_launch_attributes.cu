// cudaLaunchKernelExC with launch attributes: forwarded ones are accepted,
// bad events and foreign access windows refused, the graph-only attribute
// refused as not supported; cluster occupancy; function queries; a
// stream's device; event records with flags; copied stream attributes.
#include <cstring>

#include "check.h"

__global__ void scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void plain(int* out, char c, double d) {
  if (threadIdx.x == 0) out[0] = c + static_cast<int>(d);
}

static cudaLaunchAttribute attribute(cudaLaunchAttributeID id) {
  cudaLaunchAttribute a;
  std::memset(&a, 0, sizeof a);
  a.id = id;
  return a;
}

int main() {
  const int n = 1024;
  float* data;
  OK(cudaMalloc(&data, n * sizeof(float)));
  cudaStream_t stream;
  OK(cudaStreamCreate(&stream));
  cudaEvent_t done;
  OK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  float factor = 2.0f;
  int count = n;
  void* args[] = {&data, &factor, &count};

  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(8);
  config.blockDim = dim3(128);
  config.stream = stream;
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));

  cudaLaunchAttribute attrs[8];
  attrs[0] = attribute(cudaLaunchAttributeClusterDimension);
  attrs[0].val.clusterDim.x = 2;
  attrs[0].val.clusterDim.y = attrs[0].val.clusterDim.z = 1;
  attrs[1] = attribute(cudaLaunchAttributePriority);
  attrs[1].val.priority = -1;
  attrs[2] = attribute(cudaLaunchAttributeLaunchCompletionEvent);
  attrs[2].val.launchCompletionEvent.event = done;
  attrs[3] = attribute(cudaLaunchAttributeProgrammaticStreamSerialization);
  attrs[3].val.programmaticStreamSerializationAllowed = 1;
  attrs[4] = attribute(cudaLaunchAttributeMemSyncDomain);
  attrs[4].val.memSyncDomain = cudaLaunchMemSyncDomainDefault;
  attrs[5] = attribute(cudaLaunchAttributeAccessPolicyWindow);
  attrs[5].val.accessPolicyWindow.base_ptr = data;
  attrs[5].val.accessPolicyWindow.num_bytes = n * sizeof(float);
  attrs[5].val.accessPolicyWindow.hitRatio = 0.5f;
  attrs[5].val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attrs[5].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  attrs[6] = attribute(cudaLaunchAttributeClusterSchedulingPolicyPreference);
  attrs[6].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicySpread;
  attrs[7] = attribute(cudaLaunchAttributeProgrammaticEvent);
  attrs[7].val.programmaticEvent.event = done;
  config.attrs = attrs;
  config.numAttrs = 8;
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  OK(cudaEventSynchronize(done));
  OK(cudaStreamSynchronize(stream));

  // The per-thread default stream takes attributed launches too.
  config.stream = cudaStreamPerThread;
  config.numAttrs = 2;
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  OK(cudaStreamSynchronize(cudaStreamPerThread));
  config.stream = stream;

  // A cluster that does not divide the grid is the launch's own error,
  // reported at the next synchronising call.
  attrs[0].val.clusterDim.x = 3;
  config.numAttrs = 1;
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamSynchronize(stream));
  attrs[0].val.clusterDim.x = 2;

  // An event that is not ours never reaches the server.
  attrs[2].val.launchCompletionEvent.event = reinterpret_cast<cudaEvent_t>(&count);
  config.attrs = &attrs[2];
  config.numAttrs = 1;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  attrs[2].val.launchCompletionEvent.event = done;

  // An access policy window over memory the session does not own.
  static char host_bytes[64];
  attrs[5].val.accessPolicyWindow.base_ptr = host_bytes;
  attrs[5].val.accessPolicyWindow.num_bytes = sizeof host_bytes;
  config.attrs = &attrs[5];
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamSynchronize(stream));

  // The graph-only attribute is refused by name.
  cudaLaunchAttribute graph_only = attribute(cudaLaunchAttributeDeviceUpdatableKernelNode);
  graph_only.val.deviceUpdatableKernelNode.deviceUpdatable = 1;
  config.attrs = &graph_only;
  EXPECT_STATUS(cudaErrorNotSupported, cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  config.attrs = nullptr;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  config.numAttrs = 0;
  EXPECT_STATUS(cudaErrorInvalidDeviceFunction, cudaLaunchKernelExC(&config, &count, args));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLaunchKernelExC(nullptr, reinterpret_cast<void*>(scale), args));

  // A cooperative launch through the attribute is answered like
  // cudaLaunchCooperativeKernel.
  cudaLaunchAttribute cooperative = attribute(cudaLaunchAttributeCooperative);
  cooperative.val.cooperative = 1;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  config.gridDim = dim3(1 << 20);
  EXPECT_STATUS(cudaErrorCooperativeLaunchTooLarge,
                cudaLaunchKernelExC(&config, reinterpret_cast<void*>(scale), args));
  config.gridDim = dim3(8);

  // Cluster occupancy.
  config.attrs = attrs;
  config.numAttrs = 1;
  int clusters = 0, cluster_size = 0;
  OK(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<void*>(scale), &config));
  CHECK(clusters > 0);
  OK(cudaOccupancyMaxPotentialClusterSize(&cluster_size, reinterpret_cast<void*>(scale), &config));
  CHECK(cluster_size >= 1);
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaOccupancyMaxActiveClusters(nullptr, reinterpret_cast<void*>(scale), &config));
  EXPECT_STATUS(cudaErrorInvalidDeviceFunction, cudaOccupancyMaxActiveClusters(&clusters, &count, &config));
  size_t smem = 0;
  OK(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, reinterpret_cast<void*>(scale), 2, 128));
  CHECK(smem > 0);
  size_t smem_one = 0;
  OK(cudaOccupancyAvailableDynamicSMemPerBlock(&smem_one, reinterpret_cast<void*>(scale), 1, 128));
  CHECK(smem_one >= smem);

  // Function queries: the name and layout the server's driver reported.
  const char* name = nullptr;
  OK(cudaFuncGetName(&name, reinterpret_cast<void*>(plain)));
  CHECK(name && std::strcmp(name, "_Z5plainPicd") == 0);
  EXPECT_STATUS(cudaErrorInvalidDeviceFunction, cudaFuncGetName(&name, &count));
  size_t offset = 0, size = 0;
  OK(cudaFuncGetParamInfo(reinterpret_cast<void*>(plain), 2, &offset, &size));
  CHECK(offset == 16 && size == 8);
  OK(cudaFuncGetParamInfo(reinterpret_cast<void*>(plain), 1, &offset, &size));
  CHECK(offset == 8 && size == 1);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFuncGetParamInfo(reinterpret_cast<void*>(plain), 3, &offset, &size));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // still exported, still forwarded
  OK(cudaFuncSetSharedMemConfig(reinterpret_cast<void*>(plain), cudaSharedMemBankSizeFourByte));
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaFuncSetSharedMemConfig(reinterpret_cast<void*>(plain), static_cast<cudaSharedMemConfig>(7)));
  EXPECT_STATUS(cudaErrorInvalidDeviceFunction, cudaFuncSetSharedMemConfig(&count, cudaSharedMemBankSizeDefault));
#pragma GCC diagnostic pop
  cudaFunction_t function = nullptr;
  OK(cudaGetFuncBySymbol(&function, reinterpret_cast<void*>(plain)));
  CHECK(function != nullptr);
  cudaKernel_t kernel = nullptr;
  OK(cudaGetKernel(&kernel, reinterpret_cast<void*>(plain)));
  OK(cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024, 0));
  cudaFuncAttributes fa;
  OK(cudaFuncGetAttributes(&fa, reinterpret_cast<void*>(plain)));
  CHECK(fa.maxDynamicSharedSizeBytes == 64 * 1024);
  EXPECT_STATUS(cudaErrorInvalidDevice,
                cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024, 99));
  int* out;
  OK(cudaMalloc(&out, sizeof(int)));
  char c = 3;
  double d = 4.0;
  void* plain_args[] = {&out, &c, &d};
  OK(cudaLaunchKernel(kernel, dim3(1), dim3(32), plain_args, 60 * 1024, stream));
  OK(cudaStreamSynchronize(stream));

  // A stream's device, event records with flags, copied attributes.
  int device = -1;
  OK(cudaStreamGetDevice(stream, &device));
  CHECK(device == 0);
  OK(cudaStreamGetDevice(nullptr, &device));
  CHECK(device == 0);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaStreamGetDevice(reinterpret_cast<cudaStream_t>(&count), &device));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamGetDevice(stream, nullptr));
  OK(cudaEventRecordWithFlags(done, stream, cudaEventRecordDefault));
  OK(cudaEventRecordWithFlags(done, stream, cudaEventRecordExternal));
  OK(cudaEventSynchronize(done));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle,
                cudaEventRecordWithFlags(reinterpret_cast<cudaEvent_t>(&count), stream, 0));
  cudaStream_t copy;
  OK(cudaStreamCreate(&copy));
  cudaStreamAttrValue priority;
  std::memset(&priority, 0, sizeof priority);
  priority.priority = -2;
  OK(cudaStreamSetAttribute(stream, cudaLaunchAttributePriority, &priority));
  OK(cudaStreamCopyAttributes(copy, stream));
  cudaStreamAttrValue copied;
  std::memset(&copied, 0, sizeof copied);
  OK(cudaStreamGetAttribute(copy, cudaLaunchAttributePriority, &copied));
  CHECK(copied.priority == -2);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle,
                cudaStreamCopyAttributes(copy, reinterpret_cast<cudaStream_t>(&count)));

  OK(cudaStreamDestroy(copy));
  OK(cudaEventDestroy(done));
  OK(cudaStreamDestroy(stream));
  OK(cudaFree(out));
  OK(cudaFree(data));
  return finish();
}
