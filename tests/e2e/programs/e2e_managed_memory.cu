// Managed memory. Over shm it is one set of pages the host and the GPU
// reach at the same address: the host's writes are what copies read, and
// copies and memsets into it are what the host reads. Hints are recorded
// and reported. Over tcp it is device memory with a copy in the application
// kept coherent in software: the same checks hold.
#include <cstring>
#include <thread>
#include <vector>

#include "check.h"

int main() {
  const size_t n = 100000;
  unsigned char* m = nullptr;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMallocManaged(&m, 0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMallocManaged(&m, n, 7));
  OK(cudaMallocManaged(&m, n));
  for (size_t i = 0; i < n; ++i) m[i] = static_cast<unsigned char>(i * 11 + 5);

  cudaPointerAttributes attrs;
  OK(cudaPointerGetAttributes(&attrs, m + 10));
  CHECK(attrs.type == cudaMemoryTypeManaged && attrs.devicePointer == m + 10 && attrs.hostPointer == m + 10);

  // The device reads what the host wrote, and the host what the device wrote.
  unsigned char* d = nullptr;
  OK(cudaMalloc(&d, n));
  OK(cudaMemcpy(d, m, n, cudaMemcpyDefault));
  std::vector<unsigned char> back(n);
  OK(cudaMemcpy(back.data(), d, n, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(back.data(), m, n) == 0);
  OK(cudaMemset(m + 1000, 0x7e, 500));
  OK(cudaMemsetAsync(d, 0x21, 64));
  OK(cudaMemcpyAsync(m + 50000, d, 64, cudaMemcpyDeviceToDevice));
  OK(cudaDeviceSynchronize());
  CHECK(m[1000] == 0x7e && m[1499] == 0x7e && m[1500] == static_cast<unsigned char>(1500 * 11 + 5));
  CHECK(m[50000] == 0x21 && m[50063] == 0x21);
  std::vector<unsigned char> host(64, 0x44);
  OK(cudaMemcpy(m + 7, host.data(), 64, cudaMemcpyHostToDevice));
  CHECK(m[7] == 0x44 && m[70] == 0x44);
  OK(cudaMemcpy(back.data(), m + 7, 64, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 0x44 && back[63] == 0x44);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset(m + n - 4, 0, 4096 * 64));

  // Hints: recorded and reported.
  cudaMemLocation dev0{cudaMemLocationTypeDevice, 0}, host_loc{cudaMemLocationTypeHost, 0};
  int value = -5;
  OK(cudaMemRangeGetAttribute(&value, sizeof value, cudaMemRangeAttributePreferredLocation, m, n));
  CHECK(value == cudaInvalidDeviceId);
  OK(cudaMemAdvise(m, n, cudaMemAdviseSetReadMostly, dev0));
  OK(cudaMemAdvise(m, n, cudaMemAdviseSetPreferredLocation, dev0));
  OK(cudaMemAdvise(m, 4096, cudaMemAdviseSetAccessedBy, host_loc));
  OK(cudaMemAdvise(m, 4096, cudaMemAdviseSetAccessedBy, dev0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemAdvise(d, n, cudaMemAdviseSetReadMostly, dev0));
  cudaMemLocation bogus{cudaMemLocationTypeDevice, 17};
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemAdvise(m, n, cudaMemAdviseSetPreferredLocation, bogus));
  OK(cudaMemRangeGetAttribute(&value, sizeof value, cudaMemRangeAttributeReadMostly, m, n));
  CHECK(value == 1);
  OK(cudaMemRangeGetAttribute(&value, sizeof value, cudaMemRangeAttributePreferredLocation, m, n));
  CHECK(value == 0);
  int accessed[4];
  OK(cudaMemRangeGetAttribute(accessed, sizeof accessed, cudaMemRangeAttributeAccessedBy, m, 100));
  CHECK(accessed[0] == cudaCpuDeviceId && accessed[1] == 0 && accessed[2] == cudaInvalidDeviceId);

  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  OK(cudaMemPrefetchAsync(m, n, host_loc, 0, s));
  int type = -1, id = -1;
  void* data[2] = {&type, &value};
  size_t sizes[2] = {sizeof type, sizeof value};
  cudaMemRangeAttribute which[2] = {cudaMemRangeAttributeLastPrefetchLocationType,
                                    cudaMemRangeAttributeLastPrefetchLocation};
  OK(cudaMemRangeGetAttributes(data, sizes, which, 2, m, n));
  CHECK(type == cudaMemLocationTypeHost && value == cudaCpuDeviceId);
  void* ptrs[1] = {m};
  size_t lens[1] = {n};
  size_t idx = 0;
  OK(cudaMemPrefetchBatchAsync(ptrs, lens, 1, &dev0, &idx, 1, 0, s));
  OK(cudaMemRangeGetAttribute(&id, sizeof id, cudaMemRangeAttributeLastPrefetchLocationId, m, n));
  CHECK(id == 0);
  OK(cudaMemDiscardBatchAsync(ptrs, lens, 1, 0, s));
  OK(cudaMemDiscardAndPrefetchBatchAsync(ptrs, lens, 1, &host_loc, &idx, 1, 0, s));
  OK(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamAttachMemAsync(s, m + 1, 0, cudaMemAttachSingle));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemPrefetchAsync(d, n, dev0, 0, s));
  OK(cudaStreamSynchronize(s));
  OK(cudaStreamDestroy(s));

  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(m + 1));
  OK(cudaFree(m));
  // Gone: it is no device memory any more.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset(m, 0, 16));
  // A second allocation works the same.
  OK(cudaMallocManaged(&m, 4096, cudaMemAttachHost));
  m[0] = 9;
  OK(cudaMemcpy(d, m, 1, cudaMemcpyDefault));
  OK(cudaMemcpy(back.data(), d, 1, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 9);
  OK(cudaFree(m));
  OK(cudaFree(d));

  // Several 1 MiB chunks (tcp keeps host copies by chunk), written by two
  // threads at once: every byte reaches the GPU, and the GPU's writes across
  // a chunk boundary reach the host.
  const size_t big = (3u << 20) + 123, edge = 1u << 20;
  unsigned char* b = nullptr;
  OK(cudaMallocManaged(&b, big));
  auto fill = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) b[i] = static_cast<unsigned char>(i % 251);
  };
  std::thread other(fill, big / 2, big);
  fill(0, big / 2);
  other.join();
  OK(cudaMemset(b + edge - 10, 0x5a, 20));
  OK(cudaDeviceSynchronize());
  CHECK(b[edge - 11] == (edge - 11) % 251 && b[edge - 10] == 0x5a && b[edge + 9] == 0x5a &&
        b[edge + 10] == (edge + 10) % 251);
  std::vector<unsigned char> all(big);
  OK(cudaMemcpy(all.data(), b, big, cudaMemcpyDefault));
  CHECK(all[0] == 0 && all[edge] == 0x5a && all[big / 2] == (big / 2) % 251 && all[big - 1] == (big - 1) % 251);
  b[big - 1] = 0;
  OK(cudaMemcpy(all.data(), b + big - 1, 1, cudaMemcpyDeviceToHost));
  CHECK(all[0] == 0);
  OK(cudaFree(b));
  return finish();
}
