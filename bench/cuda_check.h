// CK(call): a CUDA call of a benchmark program that fails ends the program,
// naming the call and its error (and "RESULT FAIL" for the tests that run it).
#pragma once
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                                         \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess) {                                                                             \
      fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, #call, cudaGetErrorName(e_));       \
      printf("RESULT FAIL\n");                                                                           \
      exit(1);                                                                                           \
    }                                                                                                    \
  } while (0)
