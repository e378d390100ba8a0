// Stream attributes on a real GPU: a persisting-L2 access policy window over
// a buffer a kernel then works on, and a synchronisation policy; both read
// back, the kernel's results checked.
#include "corpus.h"

__global__ void bump(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] += i;
}

int main() {
  int max_window = 0;
  CK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, 0));
  const int n = 1 << 20;
  size_t bytes = n * sizeof(int);
  if (bytes > static_cast<size_t>(max_window)) bytes = max_window;
  CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  int* d;
  CK(cudaMalloc(&d, n * sizeof(int)));
  CK(cudaMemsetAsync(d, 0, n * sizeof(int), s));
  cudaStreamAttrValue v = {};
  v.accessPolicyWindow.base_ptr = d;
  v.accessPolicyWindow.num_bytes = bytes;
  v.accessPolicyWindow.hitRatio = 0.6f;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  cudaStreamAttrValue back = {};
  CK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back));
  EXPECT(back.accessPolicyWindow.base_ptr == d, "window base differs");
  EXPECT(back.accessPolicyWindow.num_bytes == bytes, "window size differs");
  EXPECT(back.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting, "hit property differs");
  cudaStreamAttrValue sync = {};
  sync.syncPolicy = cudaSyncPolicyBlockingSync;
  CK(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &sync));
  CK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &back));
  EXPECT(back.syncPolicy == cudaSyncPolicyBlockingSync, "sync policy %d", back.syncPolicy);
  for (int r = 0; r < 10; ++r) bump<<<(n + 255) / 256, 256, 0, s>>>(d, n);
  CK(cudaStreamSynchronize(s));
  int h[4];
  CK(cudaMemcpy(h, d + n - 4, sizeof h, cudaMemcpyDeviceToHost));
  for (int k = 0; k < 4; ++k) EXPECT(h[k] == 10 * (n - 4 + k), "value %d", h[k]);
  printf("access policy window of %s, sync policy read back, kernel results right\n",
         bytes == n * sizeof(int) ? "the whole buffer" : "the device's maximum");
  v.accessPolicyWindow.num_bytes = 0;
  CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  CK(cudaCtxResetPersistingL2Cache());
  CK(cudaFree(d));
  CK(cudaStreamDestroy(s));
  return finish();
}
