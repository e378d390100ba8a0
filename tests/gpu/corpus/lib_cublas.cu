// cuBLAS: Sgemm, Dgemm, Saxpy on a created stream, GemmEx with bf16 inputs
// and fp32 compute. Inputs are small integers, so every product and sum is
// exact in float (and in bf16): the results match the CPU bit for bit
// whatever algorithm cuBLAS picks, and the printed checksums are stable.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cmath>
#include <vector>

#include "corpus.h"

#define CB(call) LIB_CK("cuBLAS", call, CUBLAS_STATUS_SUCCESS, cublasGetStatusName)

// Column-major C = A * B on the host, in double (exact for these inputs).
template <typename T>
static std::vector<double> ref_gemm(const std::vector<T>& a, const std::vector<T>& b, int n) {
  std::vector<double> c(size_t(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < n; ++k) {
      double bkj = double(b[size_t(j) * n + k]);
      for (int i = 0; i < n; ++i) c[size_t(j) * n + i] += double(a[size_t(k) * n + i]) * bkj;
    }
  return c;
}

template <typename T>
static void check_gemm(const char* what, int n, const std::vector<T>& got,
                       const std::vector<double>& want) {
  double maxerr = 0, sum = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    maxerr = std::fmax(maxerr, std::fabs(double(got[i]) - want[i]));
    sum += double(got[i]);
  }
  EXPECT(maxerr <= 1e-3, "%s max error %g", what, maxerr);
  printf("%s n=%d checksum=%.3f ok=%d\n", what, n, sum, maxerr <= 1e-3);
}

template <typename T>
static T* to_device(const std::vector<T>& h) {
  T* d;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <typename T>
static std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

int main() {
  cublasHandle_t h;
  CB(cublasCreate(&h));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CB(cublasSetStream(h, s));
  uint32_t seed = 12345;
  auto small = [&](int range) { return int(lcg(seed) >> 16) % range - range / 2; };

  {  // Sgemm n=512: |sum| <= 512*4 = 2048, exact in float.
    const int n = 512;
    std::vector<float> a(n * n), b(n * n), c(n * n, 0.f);
    for (auto& v : a) v = float(small(5));
    for (auto& v : b) v = float(small(5));
    float *da = to_device(a), *db = to_device(b), *dc = to_device(c);
    const float one = 1.f, zero = 0.f;
    CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n, &zero, dc, n));
    CK(cudaStreamSynchronize(s));
    check_gemm("sgemm", n, to_host(dc, c.size()), ref_gemm(a, b, n));

    // Saxpy on the same stream: y = 3 * x + y with x = a, y = b.
    const float three = 3.f;
    CB(cublasSaxpy(h, n * n, &three, da, 1, db, 1));
    CK(cudaStreamSynchronize(s));
    std::vector<float> y = to_host(db, b.size());
    int bad = 0;
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      bad += y[i] != 3.f * a[i] + b[i];
      sum += y[i];
    }
    EXPECT(bad == 0, "saxpy %d wrong elements", bad);
    printf("saxpy n=%d mismatches=%d sum=%.1f\n", n * n, bad, sum);
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
  }
  {  // Dgemm n=256 with non-integer (but exactly representable) inputs.
    const int n = 256;
    std::vector<double> a(n * n), b(n * n), c(n * n, 0.0);
    for (auto& v : a) v = small(9) * 0.25;
    for (auto& v : b) v = small(9) * 0.5;
    double *da = to_device(a), *db = to_device(b), *dc = to_device(c);
    const double one = 1.0, zero = 0.0;
    CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n, &zero, dc, n));
    CK(cudaStreamSynchronize(s));
    check_gemm("dgemm", n, to_host(dc, c.size()), ref_gemm(a, b, n));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
  }
  {  // GemmEx: bf16 A and B, fp32 C, fp32 compute. Small integers are exact in bf16.
    const int n = 256;
    std::vector<float> af(n * n), bf(n * n);
    std::vector<__nv_bfloat16> a(n * n), b(n * n);
    for (int i = 0; i < n * n; ++i) {
      af[i] = float(small(7));
      bf[i] = float(small(7));
      a[i] = __float2bfloat16(af[i]);
      b[i] = __float2bfloat16(bf[i]);
    }
    std::vector<float> c(n * n, 0.f);
    __nv_bfloat16 *da = to_device(a), *db = to_device(b);
    float* dc = to_device(c);
    const float one = 1.f, zero = 0.f;
    CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, CUDA_R_16BF, n, db,
                    CUDA_R_16BF, n, &zero, dc, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT));
    CK(cudaStreamSynchronize(s));
    check_gemm("gemmex_bf16", n, to_host(dc, c.size()), ref_gemm(af, bf, n));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
  }
  CB(cublasDestroy(h));
  CK(cudaStreamDestroy(s));
  return finish();
}
