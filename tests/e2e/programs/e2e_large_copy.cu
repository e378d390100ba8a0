// Copies larger than one pipeline block, pageable and pinned, both ways.
#include <cstdint>
#include <vector>

#include "check.h"

static uint64_t checksum(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i += 4093) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

int main() {
  const size_t n = (256u << 20) + 12345;
  std::vector<uint8_t> src(n), dst(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  uint8_t* d = nullptr;
  OK(cudaMalloc(&d, n));
  OK(cudaMemcpy(d, src.data(), n, cudaMemcpyHostToDevice));
  OK(cudaMemcpy(dst.data(), d, n, cudaMemcpyDeviceToHost));
  CHECK(dst == src);

  uint8_t* pinned = nullptr;
  OK(cudaMallocHost(&pinned, n));
  OK(cudaMemcpy(pinned, d, n, cudaMemcpyDeviceToHost));
  CHECK(checksum(pinned, n) == checksum(src.data(), n) && pinned[n - 1] == src[n - 1]);
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  OK(cudaMemsetAsync(d, 0, n, s));
  OK(cudaMemcpyAsync(d, pinned, n, cudaMemcpyHostToDevice, s));
  OK(cudaMemcpyAsync(dst.data(), d, n, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamSynchronize(s));
  CHECK(dst == src);

  // A pitched copy spanning many blocks.
  const size_t w = 3000, rows = 4000;
  uint8_t* p = nullptr;
  size_t pitch = 0;
  OK(cudaMallocPitch(reinterpret_cast<void**>(&p), &pitch, w, rows));
  OK(cudaMemcpy2D(p, pitch, src.data(), w + 7, w, rows, cudaMemcpyHostToDevice));
  std::vector<uint8_t> img(w * rows);
  OK(cudaMemcpy2D(img.data(), w, p, pitch, w, rows, cudaMemcpyDeviceToHost));
  bool same = true;
  for (size_t r = 0; r < rows && same; ++r)
    same = std::equal(img.begin() + r * w, img.begin() + (r + 1) * w, src.begin() + r * (w + 7));
  CHECK(same);
  OK(cudaFree(p));
  OK(cudaStreamDestroy(s));
  OK(cudaFreeHost(pinned));
  OK(cudaFree(d));
  return finish();
}
