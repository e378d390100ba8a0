// Managed memory: the host initialises, kernels update in place, the host
// reads after synchronizing; advice, prefetches and range attributes.
// Through rgpu managed memory needs the client on the GPU's host (shm): the
// manifest runs it over shm only (over tcp cudaMallocManaged fails with
// cudaErrorNotSupported, which the end-to-end tests check).
#include "corpus.h"

__global__ void step(float* x, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * k + 1.0f;
}

__global__ void increment(int* c) { *c += 1; }

int main() {
  const int n = 1 << 20;
  float* x;
  CK(cudaMallocManaged(&x, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 100);
  cudaMemLocation dev{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
  CK(cudaMemAdvise(x, n * sizeof(float), cudaMemAdviseSetPreferredLocation, dev));
  CK(cudaMemAdvise(x, n * sizeof(float), cudaMemAdviseSetAccessedBy, dev));
  int preferred = -9;
  CK(cudaMemRangeGetAttribute(&preferred, sizeof preferred, cudaMemRangeAttributePreferredLocation, x,
                              n * sizeof(float)));
  printf("preferred location: %d\n", preferred);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CK(cudaMemPrefetchAsync(x, n * sizeof(float), dev, 0, s));
  step<<<n / 256, 256, 0, s>>>(x, n, 2.0f);
  step<<<n / 256, 256, 0, s>>>(x, n, 0.5f);
  CK(cudaMemPrefetchAsync(x, n * sizeof(float), host, 0, s));
  CK(cudaStreamSynchronize(s));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += x[i] != static_cast<float>(i % 100) + 1.5f;
  EXPECT(bad == 0, "%d wrong", bad);
  printf("two kernels on managed memory: mismatches=%d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(x, n * sizeof(float)));

  // Host and device in turns on one small allocation, attached to a stream.
  int* counter;
  CK(cudaMallocManaged(&counter, sizeof(int), cudaMemAttachHost));
  CK(cudaStreamAttachMemAsync(s, counter, 0, cudaMemAttachSingle));
  *counter = 40;
  increment<<<1, 1, 0, s>>>(counter);
  CK(cudaStreamSynchronize(s));
  *counter += 1;
  increment<<<1, 1, 0, s>>>(counter);
  CK(cudaStreamSynchronize(s));
  printf("counter: %d\n", *counter);
  EXPECT(*counter == 43, "counter %d", *counter);
  cudaPointerAttributes a;
  CK(cudaPointerGetAttributes(&a, counter));
  printf("pointer type managed: %s\n", a.type == cudaMemoryTypeManaged ? "yes" : "no");
  CK(cudaStreamDestroy(s));
  CK(cudaFree(counter));
  CK(cudaFree(x));
  return finish();
}
