// Driver-API helpers for the GPU corpus: CU aborts on an unexpected CUresult,
// printing its name (stable text, the same from NVIDIA's driver and rgpu's).
#pragma once
#include <cuda.h>

#include "corpus.h"

static const char* cu_error_name(CUresult e) {
  const char* s = nullptr;
  return cuGetErrorName(e, &s) == CUDA_SUCCESS ? s : "(unknown CUresult)";
}

#define CU(call)                                                                               \
  do {                                                                                         \
    CUresult cu_err_ = (call);                                                                 \
    if (cu_err_ != CUDA_SUCCESS) {                                                             \
      printf("CUDA driver error %s at %s:%d: %s\n", cu_error_name(cu_err_), __FILE__, __LINE__, \
             #call);                                                                           \
      printf("RESULT FAIL\n");                                                                 \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
