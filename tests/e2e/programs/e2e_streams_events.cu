// Streams and events: creation with flags and priorities, ordering of async
// copies, queries, waits and timing.
#include <vector>

#include "check.h"

int main() {
  int least = 0, greatest = 0;
  OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s1, s2, s3;
  OK(cudaStreamCreate(&s1));
  OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  OK(cudaStreamCreateWithPriority(&s3, cudaStreamDefault, greatest));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamCreateWithFlags(&s1, 0x80));

  const size_t n = 1 << 22;
  float* host = nullptr;
  OK(cudaMallocHost(&host, n * sizeof(float)));
  std::vector<float> back(n);
  for (size_t i = 0; i < n; ++i) host[i] = 0.5f * i;
  float* d = nullptr;
  OK(cudaMalloc(&d, n * sizeof(float)));

  cudaEvent_t start, stop, mid, untimed;
  OK(cudaEventCreate(&start));
  OK(cudaEventCreate(&stop));
  OK(cudaEventCreateWithFlags(&mid, cudaEventBlockingSync));
  OK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));

  OK(cudaEventRecord(start, s1));
  OK(cudaMemcpyAsync(d, host, n * sizeof(float), cudaMemcpyHostToDevice, s1));
  OK(cudaEventRecord(mid, s1));
  OK(cudaStreamWaitEvent(s2, mid, 0));
  OK(cudaMemsetAsync(d, 0, sizeof(float) * 16, s2));
  OK(cudaEventRecord(untimed, s2));
  OK(cudaMemcpyAsync(back.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost, s2));
  OK(cudaEventRecord(stop, s2));
  OK(cudaEventSynchronize(stop));
  OK(cudaEventQuery(stop));
  OK(cudaStreamQuery(s1));
  CHECK(back[0] == 0.0f && back[15] == 0.0f && back[16] == host[16] && back[n - 1] == host[n - 1]);

  float ms = -1;
  OK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, start, untimed));

  // Async copies on one stream run in order.
  for (int round = 0; round < 8; ++round) {
    for (size_t i = 0; i < 1024; ++i) host[i] = static_cast<float>(round);
    OK(cudaMemcpyAsync(d, host, 1024 * sizeof(float), cudaMemcpyHostToDevice, s3));
    OK(cudaMemcpyAsync(back.data(), d, 1024 * sizeof(float), cudaMemcpyDeviceToHost, s3));
    OK(cudaStreamSynchronize(s3));
    CHECK(back[1023] == static_cast<float>(round));
  }
  OK(cudaMemcpy2DAsync(d, 64, host, 64, 64, 16, cudaMemcpyHostToDevice, s1));
  OK(cudaMemset2DAsync(d, 64, 0, 8, 16, s1));
  OK(cudaMemcpy2DAsync(back.data(), 64, d, 64, 64, 16, cudaMemcpyDeviceToHost, s1));
  OK(cudaStreamSynchronize(s1));
  CHECK(back[0] == 0.0f && back[2] == host[2]);

  OK(cudaDeviceSynchronize());
  OK(cudaEventDestroy(start));
  OK(cudaEventDestroy(stop));
  OK(cudaEventDestroy(mid));
  OK(cudaEventDestroy(untimed));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaEventQuery(start));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaEventDestroy(start));

  // Many events at once (rgpu makes them ahead in batches): each is new,
  // never recorded, and of the flags asked for; recorded, each times.
  cudaEvent_t many[20], untimed_many[3];
  for (auto& e : many) OK(cudaEventCreate(&e));
  for (auto& e : untimed_many) OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (int i = 0; i < 20; ++i) {
    OK(cudaEventQuery(many[i]));
    for (int j = 0; j < i; ++j) CHECK(many[i] != many[j]);
  }
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, many[0], many[1]));
  for (auto& e : many) OK(cudaEventRecord(e, s1));
  OK(cudaEventSynchronize(many[19]));
  OK(cudaEventElapsedTime(&ms, many[0], many[19]));
  CHECK(ms >= 0.0f);
  OK(cudaEventRecord(untimed_many[2], s1));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, many[0], untimed_many[2]));
  for (auto& e : many) OK(cudaEventDestroy(e));
  for (auto& e : untimed_many) OK(cudaEventDestroy(e));
  OK(cudaStreamDestroy(s1));
  OK(cudaStreamDestroy(s2));
  OK(cudaStreamDestroy(s3));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaStreamSynchronize(s2));
  OK(cudaStreamSynchronize(0));
  OK(cudaStreamSynchronize(cudaStreamPerThread));
  OK(cudaFree(d));
  OK(cudaFreeHost(host));
  return finish();
}
