// Ordinary malloc'd memory registered with cudaHostRegister, then used in
// place by the GPU as NPP does: its device pointer from
// cudaHostGetDevicePointer, a kernel that reads and writes through it, and
// a kernel handed the host pointer itself (unified addressing). After
// cudaHostUnregister the memory is the program's as before.
#include <cstdlib>
#include <cstring>

#include "corpus.h"

__global__ void scale_in_place(float* p, int n, float by) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * by + 1.0f;
}

int main() {
  const int n = (1 << 20) + 37;  // not a whole number of pages
  float* buf = static_cast<float*>(malloc(n * sizeof(float)));
  char* neighbour = static_cast<char*>(malloc(32));
  if (!buf || !neighbour) return printf("RESULT FAIL\n"), 1;
  strcpy(neighbour, "untouched");
  for (int i = 0; i < n; ++i) buf[i] = float(i % 1000);

  CK(cudaHostRegister(buf, n * sizeof(float), cudaHostRegisterMapped));
  float* dev = nullptr;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), buf, 0));
  printf("device pointer: %s\n", dev ? "yes" : "no");
  scale_in_place<<<(n + 255) / 256, 256>>>(dev, n, 2.0f);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += buf[i] != float(i % 1000) * 2.0f + 1.0f;
  EXPECT(bad == 0, "%d wrong after the kernel through the device pointer", bad);
  // Host writes are seen by the next kernel, handed the host pointer this time.
  for (int i = 0; i < n; i += 4096) buf[i] = -1.0f;
  scale_in_place<<<(n + 255) / 256, 256>>>(buf, n, 0.5f);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  printf("buf[0]=%.2f buf[4096]=%.2f buf[5]=%.2f buf[n-1]=%.2f\n", buf[0], buf[4096], buf[5], buf[n - 1]);
  EXPECT(buf[0] == 0.5f && buf[5] == 6.5f, "second kernel");
  printf("checksum=%016llx\n", (unsigned long long)fnv1a(buf, n * sizeof(float)));

  CK(cudaHostUnregister(buf));
  buf[1] = 42.0f;  // still the program's memory
  EXPECT(buf[1] == 42.0f && strcmp(neighbour, "untouched") == 0, "memory after unregister");
  printf("after unregister: %.1f %s\n", buf[1], neighbour);
  free(neighbour);
  free(buf);
  return finish();
}
