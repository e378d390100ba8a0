// Device-wide settings: cudaSetDeviceFlags/GetDeviceFlags, limits
// (stack, malloc heap, printf FIFO), stream priorities and the stream
// creation variants.
#include "corpus.h"

__global__ void write_id(int* d, int v) { d[threadIdx.x] = v + threadIdx.x; }

int main() {
  // Flags first: the scheduling flag is meant to be set before heavy use.
  CK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  unsigned flags = 0;
  CK(cudaGetDeviceFlags(&flags));
  printf("device flags=0x%x schedule=0x%x\n", flags, flags & cudaDeviceScheduleMask);
  EXPECT((flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync, "schedule flag");
  cudaError_t bad_flags = cudaSetDeviceFlags(0xFFFF0000u);
  printf("cudaSetDeviceFlags(garbage): %s\n", cudaGetErrorName(bad_flags));
  EXPECT(bad_flags == cudaErrorInvalidValue, "garbage flags accepted");
  cudaGetLastError();

  struct {
    cudaLimit limit;
    const char* name;
    size_t set;
  } limits[] = {
      {cudaLimitStackSize, "stack", 4096},
      {cudaLimitMallocHeapSize, "malloc heap", 32u << 20},
      {cudaLimitPrintfFifoSize, "printf fifo", 2u << 20},
  };
  for (auto& l : limits) {
    size_t before = 0, after = 0;
    CK(cudaDeviceGetLimit(&before, l.limit));
    CK(cudaDeviceSetLimit(l.limit, l.set));
    CK(cudaDeviceGetLimit(&after, l.limit));
    printf("limit %-12s default=%zu set=%zu now=%zu\n", l.name, before, l.set, after);
    EXPECT(after >= l.set, "limit %s not applied", l.name);
  }
  size_t v = 0;
  cudaError_t bad_limit = cudaDeviceGetLimit(&v, static_cast<cudaLimit>(0x7777));
  printf("cudaDeviceGetLimit(bogus): %s\n", cudaGetErrorName(bad_limit));
  EXPECT(bad_limit != cudaSuccess, "bogus limit");
  cudaGetLastError();

  int least = 0, greatest = 0;
  CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  printf("stream priorities: least=%d greatest=%d\n", least, greatest);
  EXPECT(greatest <= least, "priority range");

  cudaStream_t hi, lo, nb, plain;
  CK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest));
  CK(cudaStreamCreateWithPriority(&lo, cudaStreamDefault, least));
  CK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&plain));
  int* d;
  CK(cudaMalloc(&d, 4 * 32 * sizeof(int)));
  cudaStream_t all[] = {hi, lo, nb, plain};
  for (int i = 0; i < 4; ++i) write_id<<<1, 32, 0, all[i]>>>(d + 32 * i, 1000 * (i + 1));
  CK(cudaGetLastError());
  for (auto s : all) CK(cudaStreamSynchronize(s));
  int h[128];
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 128; ++i) bad += h[i] != 1000 * (i / 32 + 1) + i % 32;
  EXPECT(bad == 0, "%d wrong", bad);
  printf("priority streams ran: mismatches=%d\n", bad);
  for (auto s : all) CK(cudaStreamDestroy(s));
  CK(cudaFree(d));
  return finish();
}
