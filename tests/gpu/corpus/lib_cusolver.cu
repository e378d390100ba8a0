// cuSOLVER dense: Cholesky (Dpotrf + Dpotrs) of a 128x128 SPD matrix, LU
// with pivoting (Dgetrf + Dgetrs) of a 128x128 general one, both solving
// A x = b for a known integer x, and Sgesvd of a 64x32 matrix checked by
// rebuilding A = U S V^T. Every devInfo must be 0.
#include <cusolverDn.h>

#include <cmath>
#include <vector>

#include "corpus.h"

#define CSV(call) LIB_CK("cuSOLVER", call, CUSOLVER_STATUS_SUCCESS, corpus_status)

template <typename T>
static T* dev(const std::vector<T>& h) {
  T* d;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
static int info_of(const int* dinfo) {
  int info = -1;
  CK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
  return info;
}

int main() {
  cusolverDnHandle_t h;
  CSV(cusolverDnCreate(&h));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CSV(cusolverDnSetStream(h, s));
  uint32_t seed = 31337;
  auto small = [&](int range) { return double(int(lcg(seed) >> 16) % range - range / 2); };
  int* dinfo;
  CK(cudaMalloc(&dinfo, sizeof(int)));
  const int n = 128;

  for (int lu = 0; lu < 2; ++lu) {  // column-major A, b = A * xt
    std::vector<double> A(n * n), xt(n), b(n, 0.0);
    if (!lu) {  // SPD: M^T M + n I
      std::vector<double> M(n * n);
      for (auto& v : M) v = small(7);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          double acc = i == j ? n : 0;
          for (int p = 0; p < n; ++p) acc += M[i * n + p] * M[j * n + p];
          A[j * n + i] = acc;
        }
    } else {  // general, non-symmetric, made well conditioned by its diagonal
      for (auto& v : A) v = small(9);
      for (int i = 0; i < n; ++i) A[i * n + i] += (i % 2 ? 40 : -40);
    }
    for (int i = 0; i < n; ++i) xt[i] = double(i % 11 - 5);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) b[i] += A[j * n + i] * xt[j];
    double *dA = dev(A), *db = dev(b), *work;
    int lwork = 0, *dpiv = nullptr;
    if (!lu) CSV(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, dA, n, &lwork));
    else CSV(cusolverDnDgetrf_bufferSize(h, n, n, dA, n, &lwork));
    CK(cudaMalloc(&work, (lwork > 0 ? lwork : 1) * sizeof(double)));
    if (!lu) {
      CSV(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, dA, n, work, lwork, dinfo));
      EXPECT(info_of(dinfo) == 0, "potrf info %d", info_of(dinfo));
      CSV(cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, dA, n, db, n, dinfo));
      EXPECT(info_of(dinfo) == 0, "potrs info %d", info_of(dinfo));
    } else {
      CK(cudaMalloc(&dpiv, n * sizeof(int)));
      CSV(cusolverDnDgetrf(h, n, n, dA, n, work, dpiv, dinfo));
      EXPECT(info_of(dinfo) == 0, "getrf info %d", info_of(dinfo));
      CSV(cusolverDnDgetrs(h, CUBLAS_OP_N, n, 1, dA, n, dpiv, db, n, dinfo));
      EXPECT(info_of(dinfo) == 0, "getrs info %d", info_of(dinfo));
    }
    std::vector<double> x(n);
    CK(cudaMemcpy(x.data(), db, n * sizeof(double), cudaMemcpyDeviceToHost));
    double err = 0, sum = 0;
    for (int i = 0; i < n; ++i) err = std::fmax(err, std::fabs(x[i] - xt[i])), sum += x[i] * (i + 1);
    EXPECT(err < 1e-8, "%s solution error %g", lu ? "getrs" : "potrs", err);
    printf("%s n=%d solution_ok=%d checksum=%.3f\n", lu ? "getrf+getrs" : "potrf+potrs", n,
           err < 1e-8, sum);
    CK(cudaFree(dA));
    CK(cudaFree(db));
    CK(cudaFree(work));
    if (dpiv) CK(cudaFree(dpiv));
  }

  {  // Sgesvd 64x32: A = U S VT with jobu = jobvt = 'S'.
    const int m = 64, k = 32;
    std::vector<float> A(m * k), S(k), U(m * k), VT(k * k);
    double fro = 0;
    for (auto& v : A) v = float(small(9)), fro += double(v) * v;
    float *dA = dev(A), *dS = dev(S), *dU = dev(U), *dVT = dev(VT), *work;
    int lwork = 0;
    CSV(cusolverDnSgesvd_bufferSize(h, m, k, &lwork));
    CK(cudaMalloc(&work, (lwork > 0 ? lwork : 1) * sizeof(float)));
    CSV(cusolverDnSgesvd(h, 'S', 'S', m, k, dA, m, dS, dU, m, dVT, k, work, lwork, nullptr, dinfo));
    EXPECT(info_of(dinfo) == 0, "gesvd info %d", info_of(dinfo));
    CK(cudaMemcpy(S.data(), dS, k * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(U.data(), dU, m * k * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(VT.data(), dVT, k * k * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0, s2 = 0;
    for (int p = 0; p < k; ++p) s2 += double(S[p]) * S[p];
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        for (int p = 0; p < k; ++p) acc += double(U[p * m + i]) * S[p] * VT[j * k + p];
        err = std::fmax(err, std::fabs(acc - A[j * m + i]));
      }
    bool sorted = true;
    for (int p = 1; p < k; ++p) sorted = sorted && S[p] <= S[p - 1] && S[p] >= 0;
    EXPECT(err < 1e-3, "gesvd reconstruction error %g", err);
    EXPECT(std::fabs(s2 - fro) < 1e-4 * fro, "sum S^2 %f != |A|_F^2 %f", s2, fro);
    EXPECT(sorted, "singular values not sorted descending");
    printf("gesvd %dx%d rebuild_ok=%d sorted=%d s_max=%.2f sum_s2=%.0f\n", m, k, err < 1e-3,
           sorted, S[0], s2);
    for (void* p : {(void*)dA, (void*)dS, (void*)dU, (void*)dVT, (void*)work}) CK(cudaFree(p));
  }
  CK(cudaFree(dinfo));
  CSV(cusolverDnDestroy(h));
  CK(cudaStreamDestroy(s));
  return finish();
}
