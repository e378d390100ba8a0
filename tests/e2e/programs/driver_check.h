// The end-to-end checks for driver-API calls: EXPECT_CU a CUresult.
#pragma once
#include <cuda.h>

#include "check.h"

static const char* cu_name(CUresult e) {
  const char* s = nullptr;
  return cuGetErrorName(e, &s) == CUDA_SUCCESS ? s : "(unknown CUresult)";
}

#define EXPECT_CU(expected, call)                                                                     \
  do {                                                                                                \
    CUresult e_ = (call);                                                                             \
    if (e_ != (expected)) {                                                                           \
      std::printf("FAILED %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call, cu_name(e_), \
                  cu_name(expected));                                                                 \
      ++g_failures;                                                                                   \
    }                                                                                                 \
  } while (0)

#define CU_OK(call) EXPECT_CU(CUDA_SUCCESS, call)
