// Zero-copy mapped host memory: a kernel reads its input from and writes
// its output to page-locked host memory through device pointers from
// cudaHostGetDevicePointer; the host sees the results with no copy.
// Through rgpu over shm the GPU maps the application's pages in place; over
// tcp mapped memory is device memory at the host address, coherent in
// software at every call.
#include "corpus.h"

__global__ void square_plus(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + i;
}

int main() {
  const int n = 1 << 18;
  const size_t bytes = n * sizeof(int);
  int *in, *out;
  CK(cudaHostAlloc(&in, bytes, cudaHostAllocMapped));
  CK(cudaHostAlloc(&out, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  unsigned flags = 0;
  CK(cudaHostGetFlags(&flags, out));
  printf("flags mapped=%d portable=%d\n", (flags & cudaHostAllocMapped) != 0, (flags & cudaHostAllocPortable) != 0);

  for (int i = 0; i < n; ++i) {
    in[i] = i % 4096;
    out[i] = -1;
  }
  int *din, *dout;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&din), in, 0));
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dout), out, 0));
  square_plus<<<n / 256, 256>>>(din, dout, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != (i % 4096) * (i % 4096) + i;
  EXPECT(bad == 0, "%d wrong", bad);
  printf("kernel through mapped memory: mismatches=%d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(out, bytes));

  // The host changes the input in place; a second launch sees it.
  for (int i = 0; i < n; ++i) in[i] = 2;
  square_plus<<<n / 256, 256>>>(din, dout, n);
  CK(cudaDeviceSynchronize());
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != 4 + i;
  EXPECT(bad == 0, "%d wrong after the host's update", bad);
  printf("after host update: mismatches=%d\n", bad);
  CK(cudaFreeHost(in));
  CK(cudaFreeHost(out));
  return finish();
}
