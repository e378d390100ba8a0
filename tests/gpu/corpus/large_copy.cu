// 256 MB round trips, from pageable (malloc) and pinned (cudaMallocHost)
// memory, plus a device-to-device copy in between; checksums compared.
#include <cstdlib>
#include <cstring>

#include "corpus.h"

static void fill(uint64_t* p, size_t n, uint64_t seed) {
  uint64_t x = seed;
  for (size_t i = 0; i < n; ++i) {  // xorshift64: cheap, deterministic
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p[i] = x;
  }
}

static uint64_t sum64(const uint64_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; ++i) s += p[i] * (i | 1);  // position-sensitive
  return s;
}

static void round_trip(const char* kind, uint64_t* src, uint64_t* dst, void* d1, void* d2, size_t bytes) {
  size_t n = bytes / 8;
  fill(src, n, bytes ^ (uint64_t)strlen(kind));
  memset(dst, 0, bytes);
  uint64_t want = sum64(src, n);
  CK(cudaMemcpy(d1, src, bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d2, d1, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(dst, d2, bytes, cudaMemcpyDeviceToHost));
  uint64_t got = sum64(dst, n);
  bool same = memcmp(src, dst, bytes) == 0;
  EXPECT(same && got == want, "%s round trip differs", kind);
  printf("%-8s %zu MB checksum=%016llx %s\n", kind, bytes >> 20, (unsigned long long)got,
         same ? "identical" : "DIFFERENT");
}

int main() {
  const size_t bytes = size_t(256) << 20;
  void *d1, *d2;
  CK(cudaMalloc(&d1, bytes));
  CK(cudaMalloc(&d2, bytes));
  uint64_t* a = static_cast<uint64_t*>(malloc(bytes));
  uint64_t* b = static_cast<uint64_t*>(malloc(bytes));
  if (!a || !b) return printf("RESULT FAIL (host malloc)\n"), 1;
  round_trip("pageable", a, b, d1, d2, bytes);
  free(a);
  free(b);
  uint64_t *pa, *pb;
  CK(cudaMallocHost(&pa, bytes));
  CK(cudaMallocHost(&pb, bytes));
  round_trip("pinned", pa, pb, d1, d2, bytes);
  // An odd size and offset: not a multiple of any chunking rgpu may use.
  const size_t odd = bytes - 4093;
  CK(cudaMemcpy(static_cast<char*>(d1) + 3, reinterpret_cast<char*>(pa) + 5, odd, cudaMemcpyHostToDevice));
  memset(pb, 0, bytes);
  CK(cudaMemcpy(pb, static_cast<char*>(d1) + 3, odd, cudaMemcpyDeviceToHost));
  bool same = memcmp(reinterpret_cast<char*>(pa) + 5, pb, odd) == 0;
  EXPECT(same, "odd-size copy differs");
  printf("odd size %zu bytes: %s checksum=%016llx\n", odd, same ? "identical" : "DIFFERENT",
         (unsigned long long)fnv1a(pb, 1 << 20));
  CK(cudaFreeHost(pa));
  CK(cudaFreeHost(pb));
  CK(cudaFree(d1));
  CK(cudaFree(d2));
  return finish();
}
