// Shared by the end-to-end programs: CHECK a condition, EXPECT a CUDA status.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

static int g_failures = 0;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      std::printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
      ++g_failures;                                                  \
    }                                                                \
  } while (0)

#define EXPECT_STATUS(expected, call)                                                          \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != (expected)) {                                                                    \
      std::printf("FAILED %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,     \
                  cudaGetErrorName(e_), cudaGetErrorName(expected));                           \
      ++g_failures;                                                                            \
    }                                                                                          \
  } while (0)

#define OK(call) EXPECT_STATUS(cudaSuccess, call)

// Whether every byte of v is x.
inline bool all(const std::vector<unsigned char>& v, unsigned char x) {
  for (unsigned char c : v)
    if (c != x) return false;
  return true;
}

// n bytes of device memory, copied to the host.
inline std::vector<unsigned char> read_back(const void* d, size_t n) {
  std::vector<unsigned char> h(n);
  OK(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost));
  return h;
}

// A graph memset node's parameters: n bytes of `value` at dst.
inline cudaMemsetParams byte_memset(void* dst, unsigned char value, size_t n) {
  cudaMemsetParams m{};
  m.dst = dst;
  m.value = value;
  m.elementSize = 1;
  m.width = n;
  m.height = 1;
  return m;
}

static int finish() {
  std::printf("RESULT %s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
