// One of many concurrent clients: for a fixed time, copy data to the GPU,
// transform it with a kernel, copy it back and check every element. Prints
// its iteration count; exits non-zero on any wrong result or CUDA error.
// usage: stress_client SECONDS ID
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void transform(unsigned* v, size_t n, unsigned salt) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) v[i] = v[i] * 2654435761u + salt;
}

#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      printf("client %d: %s failed: %s\n", id, #call, cudaGetErrorName(e_));              \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const double seconds = atof(argv[1]);
  const int id = atoi(argv[2]);
  const size_t n = (1u << 20) + static_cast<size_t>(id) * 4099;  // sizes differ per client
  std::vector<unsigned> host(n), back(n);
  unsigned* pinned;
  unsigned* dev;
  CK(cudaMalloc(&dev, n * sizeof(unsigned)));
  CK(cudaMallocHost(&pinned, n * sizeof(unsigned)));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long iterations = 0, errors = 0;
  unsigned seed = 12345u + id;
  while (std::chrono::steady_clock::now() < end) {
    unsigned salt = seed = seed * 1103515245u + 12345u;
    bool use_pinned = iterations % 2;
    unsigned* src = use_pinned ? pinned : host.data();
    for (size_t i = 0; i < n; i += 97) src[i] = static_cast<unsigned>(i) ^ salt;
    CK(cudaMemcpyAsync(dev, src, n * sizeof(unsigned), cudaMemcpyHostToDevice, s));
    transform<<<(n + 255) / 256, 256, 0, s>>>(dev, n, salt);
    CK(cudaMemcpyAsync(back.data(), dev, n * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < n; i += 97) errors += back[i] != src[i] * 2654435761u + salt;
    ++iterations;
  }
  CK(cudaStreamDestroy(s));
  CK(cudaFreeHost(pinned));
  CK(cudaFree(dev));
  printf("client %d iterations %ld errors %ld\n", id, iterations, errors);
  return errors ? 1 : 0;
}
