// A cooperative launch: all blocks resident at once, synchronising across
// the whole grid (cooperative groups) between the two phases of a sum; a
// grid too large to be resident is refused at the launch.
#include <cooperative_groups.h>

#include <vector>

#include "corpus.h"

namespace cg = cooperative_groups;

__global__ void grid_sum(const int* in, int n, long long* partial, long long* total) {
  cg::grid_group grid = cg::this_grid();
  long long mine = 0;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) mine += in[i];
  __shared__ long long block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  atomicAdd(reinterpret_cast<unsigned long long*>(&block_sum), static_cast<unsigned long long>(mine));
  __syncthreads();
  if (threadIdx.x == 0) partial[blockIdx.x] = block_sum;
  grid.sync();
  if (grid.thread_rank() == 0) {
    long long t = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) t += partial[b];
    *total = t;
  }
}

int main() {
  int supported = 0;
  CK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, 0));
  EXPECT(supported == 1, "no cooperative launch");
  int sms = 0, per_sm = 0;
  const int threads = 256;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, threads, 0));
  int blocks = sms * per_sm;

  const int n = 3 << 20;
  std::vector<int> h(n);
  long long expect = 0;
  for (int i = 0; i < n; ++i) expect += h[i] = (i * 37) % 1001 - 500;
  int* d;
  long long *partial, *total;
  CK(cudaMalloc(&d, n * sizeof(int)));
  CK(cudaMalloc(&partial, blocks * sizeof(long long)));
  CK(cudaMalloc(&total, sizeof(long long)));
  CK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  int nn = n;
  void* args[] = {&d, &nn, &partial, &total};
  CK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_sum), blocks, threads, args, 0, nullptr));
  long long got = 0;
  CK(cudaMemcpy(&got, total, sizeof got, cudaMemcpyDeviceToHost));
  EXPECT(got == expect, "sum %lld, expected %lld", got, expect);
  printf("cooperative sum over the whole grid: %lld\n", got);

  cudaError_t too_large =
      cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_sum), blocks * 4, threads, args, 0, nullptr);
  printf("grid four times too large: %s\n", cudaGetErrorName(too_large));
  EXPECT(too_large == cudaErrorCooperativeLaunchTooLarge, "too large grid accepted");
  cudaError_t last = cudaGetLastError();
  printf("last error after it: %s\n", cudaGetErrorName(last));
  CK(cudaFree(d));
  CK(cudaFree(partial));
  CK(cudaFree(total));
  return finish();
}
