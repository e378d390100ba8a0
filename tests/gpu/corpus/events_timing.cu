// Events: timing (value checked > 0, never printed), blocking-sync and
// timing-disabled flavours, cross-stream dependency via cudaStreamWaitEvent,
// and the error for timing an event created without timing.
#include "corpus.h"

// Spin for roughly `cycles` SM clocks so the timed region is never empty.
__global__ void spin(long long cycles, int* flag, int value) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) *flag = value;
}

__global__ void consume(const int* flag, int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = *flag * 10;
}

int main() {
  int *flag, *out;
  CK(cudaMalloc(&flag, 4));
  CK(cudaMalloc(&out, 4));
  CK(cudaMemset(flag, 0, 4));
  CK(cudaMemset(out, 0, 4));

  cudaEvent_t start, stop, blocking, notiming;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  CK(cudaEventCreateWithFlags(&blocking, cudaEventBlockingSync));
  CK(cudaEventCreateWithFlags(&notiming, cudaEventDisableTiming));

  // A fresh event that was never recorded counts as complete.
  printf("query unrecorded: %s\n", cudaGetErrorName(cudaEventQuery(start)));

  cudaStream_t s1, s2;
  CK(cudaStreamCreate(&s1));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  CK(cudaEventRecord(start, s1));
  spin<<<1, 32, 0, s1>>>(20'000'000, flag, 42);  // ~10 ms on a ~2 GHz SM
  CK(cudaGetLastError());
  CK(cudaEventRecord(stop, s1));
  CK(cudaEventRecord(notiming, s1));
  // s2 must not read `flag` before s1's kernel wrote it.
  CK(cudaStreamWaitEvent(s2, notiming, 0));
  consume<<<1, 1, 0, s2>>>(flag, out);
  CK(cudaEventRecord(blocking, s2));

  CK(cudaEventSynchronize(stop));
  printf("query after sync: %s\n", cudaGetErrorName(cudaEventQuery(stop)));
  float ms = -1.f;
  CK(cudaEventElapsedTime(&ms, start, stop));
  EXPECT(ms > 0.f, "elapsed time not positive");
  printf("elapsed > 0: %s\n", ms > 0.f ? "yes" : "no");

  // Timing against a timing-disabled event is an error, reported by name.
  float bogus;
  cudaError_t e = cudaEventElapsedTime(&bogus, start, notiming);
  printf("elapsed with DisableTiming event: %s\n", cudaGetErrorName(e));
  EXPECT(e != cudaSuccess, "timing a DisableTiming event succeeded");
  cudaGetLastError();  // that error is not sticky; clear it

  CK(cudaEventSynchronize(blocking));
  printf("query blocking event: %s\n", cudaGetErrorName(cudaEventQuery(blocking)));
  int h = 0;
  CK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
  EXPECT(h == 420, "consumer saw %d", h);
  printf("cross-stream value=%d\n", h);
  CK(cudaStreamSynchronize(s2));
  printf("stream query: %s %s\n", cudaGetErrorName(cudaStreamQuery(s1)),
         cudaGetErrorName(cudaStreamQuery(s2)));

  for (cudaEvent_t ev : {start, stop, blocking, notiming}) CK(cudaEventDestroy(ev));
  CK(cudaStreamDestroy(s1));
  CK(cudaStreamDestroy(s2));
  CK(cudaFree(flag));
  CK(cudaFree(out));
  return finish();
}
