// Plain page-locked memory handed to kernels by its host pointer, as unified
// addressing allows (JAX, p2pBandwidthLatencyTest and UnifiedMemoryPerf do):
// cudaMallocHost memory a kernel reads and writes, cudaHostAllocPortable
// memory used by kernels of every device, a pointer inside a structure
// passed by value, a flag the host sets while a kernel waits for it (with a
// timeout), and cudaMemsetAsync on a page-locked address. Through rgpu over
// tcp each allocation becomes coherent device memory when first handed to a
// kernel; over shm the GPU maps it in place.
#include "corpus.h"

__global__ void square_plus(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + i;
}

struct Span {
  int* data;
  int n;
};
__global__ void add_to(Span s, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) s.data[i] += value;
}

// Waits until *flag is set or about `timeout` clocks pass; records which.
__global__ void wait_flag(volatile int* flag, long long timeout, int* saw) {
  long long start = clock64();
  while (!*flag && clock64() - start < timeout) {
  }
  *saw = *flag;
}

int main() {
  const int n = 1 << 18;
  const size_t bytes = n * sizeof(int);
  int devices = 0;
  CK(cudaGetDeviceCount(&devices));

  int *in, *out;
  CK(cudaMallocHost(&in, bytes));
  CK(cudaMallocHost(&out, bytes));
  for (int i = 0; i < n; ++i) {
    in[i] = i % 4096;
    out[i] = -1;
  }
  square_plus<<<n / 256, 256>>>(in, out, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != (i % 4096) * (i % 4096) + i;
  EXPECT(bad == 0, "%d wrong", bad);
  printf("cudaMallocHost in and out: mismatches=%d checksum=%016llx\n", bad, (unsigned long long)fnv1a(out, bytes));

  // The host changes the input in place; the next launch reads it.
  for (int i = 0; i < n; ++i) in[i] = 3;
  square_plus<<<n / 256, 256>>>(in, out, n);
  CK(cudaDeviceSynchronize());
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != 9 + i;
  EXPECT(bad == 0, "%d wrong after the host's update", bad);
  printf("after host update: mismatches=%d\n", bad);

  // Portable memory: each device adds its number + 1 in turn.
  int* shared;
  CK(cudaHostAlloc(&shared, bytes, cudaHostAllocPortable));
  for (int i = 0; i < n; ++i) shared[i] = i;
  for (int d = 0; d < devices; ++d) {
    CK(cudaSetDevice(d));
    add_to<<<n / 256, 256>>>(Span{shared, n}, d + 1);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  CK(cudaSetDevice(0));
  const int added = devices * (devices + 1) / 2;
  bad = 0;
  for (int i = 0; i < n; ++i) bad += shared[i] != i + added;
  EXPECT(bad == 0, "%d wrong in portable memory", bad);
  printf("portable memory through %d device(s): mismatches=%d\n", devices, bad);

  // A flag in portable memory the host sets while kernels wait for it on
  // each device (p2pBandwidthLatencyTest's delay kernel).
  int *flag, *saw;
  CK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocPortable));
  CK(cudaMallocHost(&saw, devices * sizeof(int)));
  for (int d = 0; d < devices; ++d) {
    CK(cudaSetDevice(d));
    *flag = 0;
    saw[d] = -1;
    wait_flag<<<1, 1>>>(flag, 2000000000ll, saw + d);
    CK(cudaGetLastError());
    *flag = 1;
    CK(cudaDeviceSynchronize());
    EXPECT(saw[d] == 1 || saw[d] == 0, "device %d: flag kernel wrote %d", d, saw[d]);
  }
  CK(cudaSetDevice(0));
  printf("flag kernels finished on %d device(s)\n", devices);

  // cudaMemsetAsync on a page-locked address (XLA clears pinned buffers so).
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  CK(cudaMemsetAsync(out + 16, 0, 16 * sizeof(int), stream));
  CK(cudaStreamSynchronize(stream));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != (i >= 16 && i < 32 ? 0 : 9 + i);
  EXPECT(bad == 0, "%d wrong after the memset", bad);
  printf("memset on page-locked memory: mismatches=%d\n", bad);

  CK(cudaStreamDestroy(stream));
  CK(cudaFreeHost(in));
  CK(cudaFreeHost(out));
  CK(cudaFreeHost(shared));
  CK(cudaFreeHost(flag));
  CK(cudaFreeHost(saw));
  return finish();
}
