// cudaMemcpyBatchAsync: host->device, device->device and device->host copies
// in one batch under two attribute sets, and the batch's argument errors.
#include <cstring>
#include <vector>

#include "check.h"

int main() {
  const size_t n = 3000;
  std::vector<unsigned char> src(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 5 + 2);
  unsigned char *a = nullptr, *b = nullptr;
  OK(cudaMalloc(&a, n));
  OK(cudaMalloc(&b, n));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));

  cudaMemcpyAttributes attrs[2] = {};
  attrs[0].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
  attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  size_t idxs[2] = {0, 2};
  // Two halves up, then (next batch) device to device and down.
  void* dsts[2] = {a, a + n / 2};
  const void* srcs[2] = {src.data(), src.data() + n / 2};
  size_t sizes[2] = {n / 2, n - n / 2};
  OK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, 1, s));
  void* dsts2[3] = {b, b + 1000, back.data()};
  const void* srcs2[3] = {a, a + 1000, a};
  size_t sizes2[3] = {1000, n - 1000, 10};
  OK(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 3, attrs, idxs, 2, s));
  OK(cudaStreamSynchronize(s));
  CHECK(std::memcmp(back.data(), src.data(), 10) == 0);
  OK(cudaMemcpy(back.data(), b, n, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(back.data(), src.data(), n) == 0);

  // The legacy default stream, bad attribute indices, an invalid order.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, 1, nullptr));
  size_t bad_idxs[2] = {1, 0};
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, bad_idxs, 1, s));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, 3, s));
  cudaMemcpyAttributes invalid = {};
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &invalid, idxs, 1, s));
  // A copy past an allocation fails the batch.
  size_t too_big[2] = {n / 2, n};
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyBatchAsync(dsts, srcs, too_big, 2, attrs, idxs, 1, s));

  OK(cudaStreamDestroy(s));
  OK(cudaFree(a));
  OK(cudaFree(b));
  return finish();
}
