// NVIDIA's cuBLAS, which carries its own static copy of NVIDIA's runtime,
// through rgpu's driver on the host-memory test backend: its runtime starts
// on rgpu's private tables, its handle and stream are made, and vectors go to
// device memory and back through cuBLAS's copy calls. (The test backend runs
// no kernels, so cuBLAS's arithmetic is checked on the GPU suite instead.)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "check.h"

#define BLAS_OK(call)                                                             \
  do {                                                                            \
    cublasStatus_t s_ = (call);                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                            \
      std::printf("FAILED %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, s_); \
      ++g_failures;                                                               \
    }                                                                             \
  } while (0)

int main() {
  cublasHandle_t handle = nullptr;
  BLAS_OK(cublasCreate(&handle));
  int version = 0;
  BLAS_OK(cublasGetVersion(handle, &version));
  CHECK(version >= 130000);
  cudaStream_t stream;
  OK(cudaStreamCreate(&stream));
  BLAS_OK(cublasSetStream(handle, stream));
  cudaStream_t back = nullptr;
  BLAS_OK(cublasGetStream(handle, &back));
  CHECK(back == stream);

  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = 0.5f * i;
  float* d = nullptr;
  OK(cudaMalloc(&d, n * sizeof(float)));
  BLAS_OK(cublasSetVector(n, sizeof(float), x.data(), 1, d, 1));
  BLAS_OK(cublasGetVector(n, sizeof(float), d, 1, y.data(), 1));
  CHECK(x == y);
  BLAS_OK(cublasSetVectorAsync(n / 2, sizeof(float), x.data() + n / 2, 1, d, 1, stream));
  BLAS_OK(cublasGetVectorAsync(n, sizeof(float), d, 1, y.data(), 1, stream));
  OK(cudaStreamSynchronize(stream));
  CHECK(y[0] == x[n / 2] && y[n / 2] == x[n / 2]);

  OK(cudaFree(d));
  BLAS_OK(cublasDestroy(handle));
  OK(cudaStreamDestroy(stream));
  return finish();
}
