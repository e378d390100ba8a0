// 2-D pitched memory: cudaMallocPitch, cudaMemcpy2D host->device with a host
// pitch wider than the row, a kernel indexing by pitch, a device->device
// sub-rectangle copy and cudaMemcpy2DAsync back to the host.
#include <vector>

#include "corpus.h"

__global__ void scale_rows(float* p, size_t pitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(p) + y * pitch);
    row[x] = row[x] * 2.f + float(y);
  }
}

int main() {
  const int w = 333, h = 77, hpitch_elems = 350;  // host rows padded too
  std::vector<float> host(size_t(hpitch_elems) * h, -7.f), back(size_t(w) * h), sub(size_t(100) * 50);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) host[y * hpitch_elems + x] = float(x + 1000 * (y % 9));
  float *d, *d2;
  size_t pitch, pitch2;
  CK(cudaMallocPitch((void**)&d, &pitch, w * sizeof(float), h));
  CK(cudaMallocPitch((void**)&d2, &pitch2, 100 * sizeof(float), 50));
  EXPECT(pitch >= w * sizeof(float) && pitch % 4 == 0, "pitch");
  printf("pitch=%zu pitch2=%zu\n", pitch, pitch2);
  CK(cudaMemcpy2D(d, pitch, host.data(), hpitch_elems * sizeof(float), w * sizeof(float), h,
                  cudaMemcpyHostToDevice));
  dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
  scale_rows<<<grid, block>>>(d, pitch, w, h);
  CK(cudaGetLastError());
  // Sub-rectangle: columns 10..109 of rows 20..69, device to device.
  CK(cudaMemcpy2D(d2, pitch2, reinterpret_cast<char*>(d) + 20 * pitch + 10 * sizeof(float), pitch,
                  100 * sizeof(float), 50, cudaMemcpyDeviceToDevice));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  // Back to a tightly packed host array (host pitch == width).
  CK(cudaMemcpy2DAsync(back.data(), w * sizeof(float), d, pitch, w * sizeof(float), h,
                       cudaMemcpyDeviceToHost, s));
  CK(cudaMemcpy2DAsync(sub.data(), 100 * sizeof(float), d2, pitch2, 100 * sizeof(float), 50,
                       cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  int bad = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) bad += back[y * w + x] != host[y * hpitch_elems + x] * 2.f + float(y);
  for (int y = 0; y < 50; ++y)
    for (int x = 0; x < 100; ++x) bad += sub[y * 100 + x] != back[(y + 20) * w + x + 10];
  EXPECT(bad == 0, "%d wrong", bad);
  printf("pitched_2d %dx%d mismatches=%d checksum=%016llx sub=%016llx\n", w, h, bad,
         (unsigned long long)fnv1a(back.data(), back.size() * 4),
         (unsigned long long)fnv1a(sub.data(), sub.size() * 4));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(d));
  CK(cudaFree(d2));
  return finish();
}
