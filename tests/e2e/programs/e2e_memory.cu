// Device memory, copies in every direction, pitched memory, host memory and
// the errors bad pointers and sizes must give.
#include <cstring>
#include <vector>

#include "check.h"

int main() {
  const size_t n = 1 << 20;
  std::vector<int> h(n), back(n);
  for (size_t i = 0; i < n; ++i) h[i] = static_cast<int>(i * 7);
  int *d = nullptr, *d2 = nullptr;
  OK(cudaMalloc(&d, n * sizeof(int)));
  OK(cudaMalloc(&d2, n * sizeof(int)));
  CHECK(d != nullptr);
  OK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  OK(cudaMemcpy(d2, d, n * sizeof(int), cudaMemcpyDeviceToDevice));
  OK(cudaMemcpy(back.data(), d2, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(back == h);

  // cudaMemcpyDefault infers the direction from the pointers.
  std::fill(back.begin(), back.end(), 0);
  OK(cudaMemcpy(d, h.data() + 5, 100 * sizeof(int), cudaMemcpyDefault));
  OK(cudaMemcpy(back.data(), d, 100 * sizeof(int), cudaMemcpyDefault));
  CHECK(back[0] == h[5] && back[99] == h[104]);
  int host_a = 3, host_b = 0;
  OK(cudaMemcpy(&host_b, &host_a, sizeof(int), cudaMemcpyHostToHost));
  CHECK(host_b == 3);

  // Offsets inside an allocation are valid pointers.
  OK(cudaMemcpy(back.data(), d2 + 1000, 10 * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(back[0] == h[1000]);

  OK(cudaMemset(d, 0xab, n * sizeof(int)));
  OK(cudaMemcpy(back.data(), d, sizeof(int) * 4, cudaMemcpyDeviceToHost));
  CHECK(static_cast<unsigned>(back[3]) == 0xabababab);

  size_t free_mem = 0, total_mem = 0;
  OK(cudaMemGetInfo(&free_mem, &total_mem));
  CHECK(free_mem > 0 && free_mem <= total_mem);

  // Pitched 2-D memory.
  const size_t w = 100, rows = 37;
  char* p = nullptr;
  size_t pitch = 0;
  OK(cudaMallocPitch(reinterpret_cast<void**>(&p), &pitch, w, rows));
  CHECK(pitch >= w);
  std::vector<char> img(w * rows), img_back(w * rows, 0);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<char>(i % 251);
  OK(cudaMemset2D(p, pitch, 0, w, rows));
  OK(cudaMemcpy2D(p, pitch, img.data(), w, w, rows, cudaMemcpyHostToDevice));
  OK(cudaMemcpy2D(img_back.data(), w, p, pitch, w, rows, cudaMemcpyDeviceToHost));
  CHECK(img == img_back);
  // Strided host layout on both sides.
  std::vector<char> wide(2 * w * rows, 1);
  OK(cudaMemcpy2D(wide.data(), 2 * w, p, pitch, w, rows, cudaMemcpyDeviceToHost));
  CHECK(wide[2 * w * 5 + 3] == img[w * 5 + 3] && wide[2 * w * 5 + w + 3] == 1);
  OK(cudaMemset2D(p, pitch, 7, w / 2, rows));
  OK(cudaMemcpy2D(img_back.data(), w, p, pitch, w, rows, cudaMemcpyDeviceToHost));
  CHECK(img_back[w * 3 + 1] == 7 && img_back[w * 3 + w - 1] == img[w * 3 + w - 1]);
  EXPECT_STATUS(cudaErrorInvalidPitchValue, cudaMemcpy2D(p, 10, img.data(), w, w, rows, cudaMemcpyHostToDevice));

  // Page-locked and registered host memory.
  int* pinned = nullptr;
  OK(cudaMallocHost(&pinned, 4096));
  int* pinned2 = nullptr;
  OK(cudaHostAlloc(&pinned2, 4096, cudaHostAllocPortable));
  for (int i = 0; i < 1024; ++i) pinned[i] = i;
  OK(cudaMemcpy(d, pinned, 4096, cudaMemcpyHostToDevice));
  OK(cudaMemcpy(pinned2, d, 4096, cudaMemcpyDeviceToHost));
  CHECK(pinned2[1023] == 1023);
  std::vector<int> reg(2048, 5);
  OK(cudaHostRegister(reg.data(), reg.size() * sizeof(int), cudaHostRegisterDefault));
  EXPECT_STATUS(cudaErrorHostMemoryAlreadyRegistered, cudaHostRegister(reg.data(), 16, 0));

  cudaPointerAttributes attr;
  OK(cudaPointerGetAttributes(&attr, d + 10));
  CHECK(attr.type == cudaMemoryTypeDevice && attr.device == 0 && attr.devicePointer == d + 10);
  OK(cudaPointerGetAttributes(&attr, pinned));
  CHECK(attr.type == cudaMemoryTypeHost && attr.hostPointer == pinned);
  OK(cudaPointerGetAttributes(&attr, &host_a));
  CHECK(attr.type == cudaMemoryTypeUnregistered);

  OK(cudaHostUnregister(reg.data()));
  EXPECT_STATUS(cudaErrorHostMemoryNotRegistered, cudaHostUnregister(reg.data()));
  OK(cudaFreeHost(pinned));
  OK(cudaFreeHost(pinned2));

  // Bad pointers, sizes past an allocation, bad directions.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy(d, h.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy(back.data(), d + n - 1, 8, cudaMemcpyDeviceToHost));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset(d, 0, (n + 1) * sizeof(int)));
  EXPECT_STATUS(cudaErrorInvalidMemcpyDirection,
                cudaMemcpy(d, h.data(), 4, static_cast<cudaMemcpyKind>(17)));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(d + 1));
  int* bogus = reinterpret_cast<int*>(0x1234);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy(bogus, h.data(), 4, cudaMemcpyHostToDevice));
  // The last error is the latest failure; reading it resets it.
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);

  OK(cudaFree(d));
  OK(cudaFree(d2));
  OK(cudaFree(p));
  OK(cudaFree(nullptr));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(d));
  return finish();
}
