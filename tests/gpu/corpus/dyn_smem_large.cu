// Dynamic shared memory above the default 48 KB: needs
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize) first; without it the
// launch fails. Also cudaFuncGetAttributes before and after.
#include <algorithm>
#include <vector>

#include "corpus.h"

// Stage a whole block's slice in shared memory and reverse it.
__global__ void reverse_block(const int* in, int* out, int per_block) {
  extern __shared__ int sh[];
  const int* src = in + size_t(blockIdx.x) * per_block;
  for (int i = threadIdx.x; i < per_block; i += blockDim.x) sh[i] = src[i];
  __syncthreads();
  int* dst = out + size_t(blockIdx.x) * per_block;
  for (int i = threadIdx.x; i < per_block; i += blockDim.x) dst[i] = sh[per_block - 1 - i];
}

static void print_attrs(const char* when) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, reverse_block));
  printf("%s: maxDynamicSharedSizeBytes=%d sharedSizeBytes=%zu maxThreadsPerBlock=%d binaryVersion=%d\n",
         when, a.maxDynamicSharedSizeBytes, a.sharedSizeBytes, a.maxThreadsPerBlock, a.binaryVersion);
}

int main() {
  int optin = 0;
  CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  const size_t smem = std::min<size_t>(200 * 1024, size_t(optin));  // 200 KB on an H100
  const int per_block = int(smem / sizeof(int)), blocks = 16;
  printf("opt-in limit >= 100 KB: %s, using %zu KB\n", optin >= 100 * 1024 ? "yes" : "no", smem / 1024);
  EXPECT(smem > 48 * 1024, "device cannot exceed 48 KB");

  print_attrs("before");
  reverse_block<<<blocks, 256, smem>>>(nullptr, nullptr, per_block);
  cudaError_t e = cudaGetLastError();
  printf("launch without attribute: %s\n", cudaGetErrorName(e));
  EXPECT(e != cudaSuccess, "launch with > 48 KB succeeded without opt-in");

  CK(cudaFuncSetAttribute(reverse_block, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  print_attrs("after");

  std::vector<int> h(size_t(per_block) * blocks), out(h.size());
  for (size_t i = 0; i < h.size(); ++i) h[i] = int(i * 7 + 1);
  int *din, *dout;
  CK(cudaMalloc(&din, h.size() * 4));
  CK(cudaMalloc(&dout, h.size() * 4));
  CK(cudaMemcpy(din, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  reverse_block<<<blocks, 256, smem>>>(din, dout, per_block);
  CK(cudaGetLastError());
  CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int b = 0; b < blocks; ++b)
    for (int i = 0; i < per_block; ++i)
      bad += out[size_t(b) * per_block + i] != h[size_t(b) * per_block + per_block - 1 - i];
  EXPECT(bad == 0, "%d wrong", bad);
  printf("dyn_smem_large mismatches=%d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(out.data(), out.size() * 4));
  CK(cudaFree(din));
  CK(cudaFree(dout));
  return finish();
}
