// Cooperative launches: a grid that fits is launched, one that cannot be
// resident at once is refused by the launch itself, and the session goes on.
#include "check.h"

__global__ void work(int* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x;
}

int main() {
  int supported = 0;
  OK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, 0));
  CHECK(supported == 1);
  int sms = 0, per_sm = 0;
  OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, work, 256, 0));
  int* out;
  OK(cudaMalloc(&out, 1 << 20));
  void* args[] = {&out};
  OK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(work), sms * per_sm, 256, args, 0, nullptr));
  EXPECT_STATUS(cudaErrorCooperativeLaunchTooLarge,
                cudaLaunchCooperativeKernel(reinterpret_cast<void*>(work), sms * per_sm * 64, 256, args, 0, nullptr));
  EXPECT_STATUS(cudaErrorInvalidDeviceFunction,
                cudaLaunchCooperativeKernel(reinterpret_cast<void*>(&supported), 1, 32, args, 0, nullptr));
  OK(cudaDeviceSynchronize());
  OK(cudaFree(out));
  return finish();
}
