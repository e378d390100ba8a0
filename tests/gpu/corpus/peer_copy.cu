// Peer copies between device 0 and a second GPU when there is one (else
// device 0 with itself): cudaMemcpyPeer and cudaMemcpyPeerAsync both ways,
// peer access when the pair allows it, a kernel on each side. The output
// does not depend on how many GPUs there are or whether they are peers.
#include "corpus.h"

__global__ void scale(int* d, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * k + 1;
}

int main() {
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  const int other = count > 1 ? 1 : 0;
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(int);

  int can = 0;
  if (other != 0) CK(cudaDeviceCanAccessPeer(&can, 0, other));
  if (can) {
    CK(cudaSetDevice(0));
    CK(cudaDeviceEnablePeerAccess(other, 0));
    EXPECT(cudaDeviceEnablePeerAccess(other, 0) == cudaErrorPeerAccessAlreadyEnabled, "enabled twice");
    cudaGetLastError();
  }
  if (other != 0) {
    int supported = -1;
    CK(cudaDeviceGetP2PAttribute(&supported, cudaDevP2PAttrAccessSupported, 0, other));
    EXPECT(supported == can, "access supported %d, can access %d", supported, can);
  }

  int* h = static_cast<int*>(malloc(bytes));
  for (int i = 0; i < n; ++i) h[i] = i % 1000;
  int *a, *b;
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&a, bytes));
  CK(cudaSetDevice(other));
  CK(cudaMalloc(&b, bytes));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  CK(cudaSetDevice(0));
  CK(cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice));
  scale<<<n / 256, 256>>>(a, n, 3);
  CK(cudaMemcpyPeer(b, other, a, 0, bytes));
  CK(cudaSetDevice(other));
  scale<<<n / 256, 256, 0, s>>>(b, n, 2);
  CK(cudaMemcpyPeerAsync(a, 0, b, other, bytes, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(h, a, bytes, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += h[i] != ((i % 1000) * 3 + 1) * 2 + 1;
  EXPECT(bad == 0, "%d wrong after the round trip", bad);
  printf("peer round trip mismatches=%d checksum=%016llx\n", bad, (unsigned long long)fnv1a(h, bytes));

  if (can) CK(cudaDeviceDisablePeerAccess(other));
  CK(cudaSetDevice(other));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(b));
  CK(cudaSetDevice(0));
  CK(cudaFree(a));
  free(h);
  return finish();
}
