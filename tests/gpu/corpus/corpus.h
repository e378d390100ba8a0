// Shared helpers for the GPU corpus. Every program prints only deterministic
// text (no timings, no pointers) so its stdout can be compared byte for byte
// between a local run and a run through rgpu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

// Abort on an unexpected CUDA error: print the call and the error *name*
// (stable text), exit 1 so the runner sees a failure.
#define CK(call)                                                             \
  do {                                                                       \
    cudaError_t ck_err_ = (call);                                            \
    if (ck_err_ != cudaSuccess) {                                            \
      printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(ck_err_),      \
             __FILE__, __LINE__, #call);                                     \
      printf("RESULT FAIL\n");                                               \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

// The same for a library's own status type: `lib` names the library, `ok`
// its success value, `name_of` turns a status into its name (corpus_status
// for libraries that have no such function).
static inline const char* corpus_status(int) { return "status"; }
#define LIB_CK(lib, call, ok, name_of)                                       \
  do {                                                                       \
    auto lib_st_ = (call);                                                   \
    if (lib_st_ != (ok)) {                                                   \
      printf("%s error %s (%d) at %s:%d: %s\n", lib, name_of(lib_st_),      \
             (int)lib_st_, __FILE__, __LINE__, #call);                       \
      printf("RESULT FAIL\n");                                              \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

// A soft check: records a failure, keeps going so one run reports them all.
static int g_failures = 0;
#define EXPECT(cond, ...)                                                    \
  do {                                                                       \
    if (!(cond)) {                                                           \
      printf("FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);               \
      printf(__VA_ARGS__);                                                   \
      printf("\n");                                                          \
      ++g_failures;                                                          \
    }                                                                        \
  } while (0)

// Final line + exit code, the contract with run_corpus.sh.
static inline int finish() {
  printf("RESULT %s\n", g_failures == 0 ? "PASS" : "FAIL");
  fflush(stdout);
  return g_failures == 0 ? 0 : 1;
}

// FNV-1a over bytes: a stable checksum to print instead of whole buffers.
static inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Deterministic pseudo-random fill (no rand(): its sequence is libc's choice).
static inline uint32_t lcg(uint32_t& s) { return s = s * 1664525u + 1013904223u; }

static inline const char* type_name(cudaMemoryType t) {
  switch (t) {
    case cudaMemoryTypeUnregistered: return "unregistered";
    case cudaMemoryTypeHost: return "host";
    case cudaMemoryTypeDevice: return "device";
    case cudaMemoryTypeManaged: return "managed";
  }
  return "?";
}
