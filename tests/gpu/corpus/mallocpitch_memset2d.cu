// cudaMallocPitch + cudaMemset2D: clear the whole pitched image, set an inner
// rectangle, then read it back densely and check every byte, including that
// the padding between rows was not written by the rectangle memset.
#include <vector>

#include "corpus.h"

int main() {
  const int wbytes = 1001, h = 123;
  unsigned char* d;
  size_t pitch;
  CK(cudaMallocPitch((void**)&d, &pitch, wbytes, h));
  printf("pitch=%zu\n", pitch);
  CK(cudaMemset2D(d, pitch, 0x11, pitch, h));  // whole allocation incl. padding
  CK(cudaMemset2D(d + 10 * pitch + 100, pitch, 0xAB, 500, 40));  // rows 10..49, cols 100..599
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CK(cudaMemset2DAsync(d + 60 * pitch, pitch, 0x5C, wbytes, 3, s));  // rows 60..62 full width
  CK(cudaStreamSynchronize(s));
  std::vector<unsigned char> img(pitch * h);
  CK(cudaMemcpy(img.data(), d, img.size(), cudaMemcpyDeviceToHost));  // padding included
  int bad = 0;
  for (int y = 0; y < h; ++y)
    for (size_t x = 0; x < pitch; ++x) {
      unsigned char want = 0x11;
      if (y >= 10 && y < 50 && x >= 100 && x < 600) want = 0xAB;
      if (y >= 60 && y < 63 && x < size_t(wbytes)) want = 0x5C;
      bad += img[y * pitch + x] != want;
    }
  EXPECT(bad == 0, "%d wrong bytes", bad);
  // Dense copy of the logical image for a pitch-independent checksum.
  std::vector<unsigned char> dense(size_t(wbytes) * h);
  CK(cudaMemcpy2D(dense.data(), wbytes, d, pitch, wbytes, h, cudaMemcpyDeviceToHost));
  printf("memset2d %dx%d mismatches=%d checksum=%016llx\n", wbytes, h, bad,
         (unsigned long long)fnv1a(dense.data(), dense.size()));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(d));
  return finish();
}
