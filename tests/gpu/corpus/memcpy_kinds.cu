// Every copy direction through cudaMemcpy and cudaMemcpyAsync (H2D, D2H,
// D2D, H2H, Default with each pointer combination), cudaMemset and
// cudaMemsetAsync, host memory from cudaHostAlloc with several flags, and
// cudaMemGetInfo.
#include <cstring>
#include <vector>

#include "corpus.h"

int main() {
  const size_t n = 1 << 20;  // bytes per buffer
  size_t free0 = 0, total = 0;
  CK(cudaMemGetInfo(&free0, &total));
  EXPECT(free0 > n && free0 <= total, "cudaMemGetInfo");
  printf("cudaMemGetInfo: free<=total %s, total MiB=%zu\n", free0 <= total ? "yes" : "no", total >> 20);

  unsigned char *pinned, *portable, *wc;
  CK(cudaHostAlloc(&pinned, n, cudaHostAllocDefault));
  CK(cudaHostAlloc(&portable, n, cudaHostAllocPortable));
  CK(cudaHostAlloc(&wc, n, cudaHostAllocWriteCombined));  // write-only from the CPU side, by intent
  std::vector<unsigned char> page_a(n), page_b(n);
  unsigned char *d1, *d2, *d3;
  CK(cudaMalloc(&d1, n));
  CK(cudaMalloc(&d2, n));
  CK(cudaMalloc(&d3, n));
  for (size_t i = 0; i < n; ++i) page_a[i] = (unsigned char)(i * 13 + 1);
  int bad = 0;
  auto check = [&](const char* what, const unsigned char* p, unsigned char xor_with = 0) {
    int b = 0;
    for (size_t i = 0; i < n; ++i) b += p[i] != (unsigned char)((i * 13 + 1) ^ xor_with);
    printf("  %-40s %s\n", what, b ? "WRONG" : "ok");
    bad += b != 0;
  };

  printf("cudaMemcpy:\n");
  CK(cudaMemcpy(page_b.data(), page_a.data(), n, cudaMemcpyHostToHost));
  check("H2H pageable->pageable", page_b.data());
  CK(cudaMemcpy(pinned, page_b.data(), n, cudaMemcpyHostToHost));
  check("H2H pageable->pinned", pinned);
  CK(cudaMemcpy(d1, pinned, n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d2, d1, n, cudaMemcpyDeviceToDevice));
  memset(page_b.data(), 0, n);
  CK(cudaMemcpy(page_b.data(), d2, n, cudaMemcpyDeviceToHost));
  check("H2D pinned, D2D, D2H pageable", page_b.data());
  // cudaMemcpyDefault: the runtime infers the direction from the pointers.
  CK(cudaMemcpy(d3, page_a.data(), n, cudaMemcpyDefault));  // H->D
  CK(cudaMemcpy(d1, d3, n, cudaMemcpyDefault));             // D->D
  CK(cudaMemcpy(portable, d1, n, cudaMemcpyDefault));       // D->H pinned
  check("Default H2D, D2D, D2H(portable)", portable);
  memset(page_b.data(), 0, n);
  CK(cudaMemcpy(page_b.data(), portable, n, cudaMemcpyDefault));  // H->H
  check("Default H2H", page_b.data());

  printf("cudaMemcpyAsync:\n");
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CK(cudaMemsetAsync(d1, 0, n, s));
  CK(cudaMemsetAsync(d2, 0, n, s));
  CK(cudaMemcpyAsync(wc, page_a.data(), n, cudaMemcpyHostToHost, s));
  CK(cudaMemcpyAsync(d1, wc, n, cudaMemcpyHostToDevice, s));
  CK(cudaMemcpyAsync(d2, d1, n, cudaMemcpyDeviceToDevice, s));
  memset(pinned, 0, n);
  CK(cudaMemcpyAsync(pinned, d2, n, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  check("H2H, H2D(wc), D2D, D2H(pinned)", pinned);
  CK(cudaMemsetAsync(d3, 0, n, s));
  CK(cudaMemcpyAsync(d3, page_a.data(), n, cudaMemcpyDefault, s));  // pageable source
  CK(cudaMemcpyAsync(d1, d3, n, cudaMemcpyDefault, s));
  memset(page_b.data(), 0, n);
  CK(cudaMemcpyAsync(page_b.data(), d1, n, cudaMemcpyDefault, s));  // pageable destination
  CK(cudaStreamSynchronize(s));
  check("Default async via pageable", page_b.data());
  memset(portable, 0, n);
  CK(cudaMemcpyAsync(portable, pinned, n, cudaMemcpyDefault, s));
  CK(cudaStreamSynchronize(s));
  check("Default async H2H pinned", portable);

  printf("cudaMemset:\n");
  CK(cudaMemset(d1, 0xA5, n));
  CK(cudaMemset(d1 + 1000, 0x00, 24));  // interior, unaligned
  CK(cudaMemsetAsync(d1 + 4001, 0xFF, 3, s));
  CK(cudaMemcpyAsync(pinned, d1, n, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  int mb = 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned char want = (i >= 1000 && i < 1024) ? 0x00 : (i >= 4001 && i < 4004) ? 0xFF : 0xA5;
    mb += pinned[i] != want;
  }
  printf("  %-40s %s\n", "memset / memsetAsync pattern", mb ? "WRONG" : "ok");
  bad += mb != 0;
  // Zero-byte operations are legal no-ops.
  CK(cudaMemcpy(d1, page_a.data(), 0, cudaMemcpyHostToDevice));
  CK(cudaMemset(d1, 0, 0));

  EXPECT(bad == 0, "%d checks failed", bad);
  CK(cudaStreamDestroy(s));
  for (auto p : {d1, d2, d3}) CK(cudaFree(p));
  for (auto p : {pinned, portable, wc}) CK(cudaFreeHost(p));
  return finish();
}
