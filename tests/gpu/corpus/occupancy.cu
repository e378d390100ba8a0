// Occupancy and cache configuration: cudaOccupancyMaxActiveBlocksPerMultiprocessor,
// cudaOccupancyMaxPotentialBlockSize, cudaFuncSetCacheConfig,
// cudaDeviceSetCacheConfig/GetCacheConfig, cudaFuncGetAttributes.
#include "corpus.h"

__global__ void light(float* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * 0.5f + 1.f;
}

// Many live values to push register use up (lower occupancy than `light`).
__global__ void heavy(float* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r[48];
#pragma unroll
  for (int k = 0; k < 48; ++k) r[k] = d[(i + k * 97) % n] * float(k + 1);
  float acc = 0;
#pragma unroll
  for (int k = 0; k < 48; ++k) acc += r[k] * r[47 - k];
  d[i] = acc;
}

__global__ void smem_user(float* d) {
  __shared__ float tile[8192];  // 32 KB static shared memory
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  d[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

static const char* cache_name(cudaFuncCache c) {
  switch (c) {
    case cudaFuncCachePreferNone: return "PreferNone";
    case cudaFuncCachePreferShared: return "PreferShared";
    case cudaFuncCachePreferL1: return "PreferL1";
    case cudaFuncCachePreferEqual: return "PreferEqual";
  }
  return "?";
}

template <typename K>
static void report(const char* name, K kernel, size_t dyn_smem) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  int per_sm_256 = 0, per_sm_1024 = 0, min_grid = 0, block = 0;
  // The (const void*) form binds to the exported C function; the typed one
  // to the header template that calls ...WithFlags.
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_256, (const void*)kernel, 256, dyn_smem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_1024, kernel, 1024, dyn_smem));
  // Header-only template: computes from cudaFuncGetAttributes, device
  // attributes and ...WithFlags, all forwarded calls.
  CK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, dyn_smem, 0));
  printf("%-9s regs=%d static_smem=%zu local=%zu maxThreads=%d | blocks/SM@256=%d @1024=%d | "
         "potential block=%d minGrid=%d\n",
         name, a.numRegs, a.sharedSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock, per_sm_256,
         per_sm_1024, block, min_grid);
  EXPECT(per_sm_256 >= 1 && block >= 32 && block <= 1024 && min_grid >= 1, "%s occupancy", name);
}

int main() {
  cudaFuncCache before;
  CK(cudaDeviceGetCacheConfig(&before));
  printf("device cache config initially: %s\n", cache_name(before));
  CK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  cudaFuncCache after;
  CK(cudaDeviceGetCacheConfig(&after));
  printf("device cache config after PreferShared: %s\n", cache_name(after));
  CK(cudaFuncSetCacheConfig(light, cudaFuncCachePreferL1));
  CK(cudaFuncSetCacheConfig(heavy, cudaFuncCachePreferShared));
  CK(cudaFuncSetCacheConfig(smem_user, cudaFuncCachePreferEqual));

  report("light", light, 0);
  report("heavy", heavy, 0);
  report("smem_user", smem_user, 0);
  report("light+16K", light, 16384);

  // Launch at the suggested size to show it is a valid configuration.
  int min_grid = 0, block = 0;
  CK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, light, 0, 0));
  const int n = 1 << 20;
  float* d;
  CK(cudaMalloc(&d, n * 4));
  CK(cudaMemset(d, 0, n * 4));
  light<<<(n + block - 1) / block, block>>>(d, n);
  heavy<<<(n + 255) / 256, 256>>>(d, n);
  smem_user<<<1, 1024>>>(d);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  float h[4];
  CK(cudaMemcpy(h, d + 2000, sizeof h, cudaMemcpyDeviceToHost));
  printf("sample %.3f %.3f\n", h[0], h[3]);
  CK(cudaDeviceSetCacheConfig(before));
  CK(cudaFree(d));
  return finish();
}
