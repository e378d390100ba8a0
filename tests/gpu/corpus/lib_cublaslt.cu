// cuBLASLt: an fp32 matmul D = alpha * op(A) * B + beta * C (m=n=k=256,
// A transposed) through a matmul descriptor, matrix layouts, a preference
// with a 4 MB workspace and the heuristic's first algorithm. Small integer
// inputs keep every sum exact, so D matches the CPU whatever algorithm runs.
#include <cublasLt.h>

#include <cmath>
#include <vector>

#include "corpus.h"

#define CB(call) LIB_CK("cuBLASLt", call, CUBLAS_STATUS_SUCCESS, cublasLtGetStatusName)

int main() {
  const int m = 256, n = 256, k = 256;
  // Column-major: A is stored k x m (used transposed), B k x n, C and D m x n.
  std::vector<float> a(size_t(k) * m), b(size_t(k) * n), c(size_t(m) * n), d(size_t(m) * n, -1.f);
  uint32_t seed = 777;
  auto small = [&](int range) { return float(int(lcg(seed) >> 16) % range - range / 2); };
  for (auto& v : a) v = small(7);
  for (auto& v : b) v = small(7);
  for (auto& v : c) v = small(101);
  const float alpha = 2.f, beta = -1.f;

  float *da, *db, *dc, *dd;
  void* work;
  const size_t work_bytes = 4u << 20;
  CK(cudaMalloc(&da, a.size() * sizeof(float)));
  CK(cudaMalloc(&db, b.size() * sizeof(float)));
  CK(cudaMalloc(&dc, c.size() * sizeof(float)));
  CK(cudaMalloc(&dd, d.size() * sizeof(float)));
  CK(cudaMalloc(&work, work_bytes));
  CK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dc, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  cublasLtHandle_t lt;
  CB(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  cublasLtMatrixLayout_t la, lb, lc, ld;
  CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, k, m, k));
  CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m));
  CB(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t pref;
  CB(cublasLtMatmulPreferenceCreate(&pref));
  CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                          &work_bytes, sizeof(work_bytes)));
  cublasLtMatmulHeuristicResult_t heur[4] = {};
  int found = 0;
  CB(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, ld, pref, 4, heur, &found));
  EXPECT(found >= 1, "heuristic returned %d algorithms", found);
  EXPECT(found < 1 || heur[0].workspaceSize <= work_bytes, "workspace %zu > %zu",
         heur[0].workspaceSize, work_bytes);
  printf("heuristic found_any=%d\n", found >= 1);
  if (found >= 1) {
    CB(cublasLtMatmul(lt, op, &alpha, da, la, db, lb, &beta, dc, lc, dd, ld, &heur[0].algo, work,
                      work_bytes, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(d.data(), dd, d.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }

  // CPU reference: D[i,j] = alpha * sum_p A[p,i] * B[p,j] + beta * C[i,j].
  double maxerr = 0, sum = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[size_t(i) * k + p]) * b[size_t(j) * k + p];
      double want = alpha * acc + beta * c[size_t(j) * m + i];
      double got = d[size_t(j) * m + i];
      maxerr = std::fmax(maxerr, std::fabs(got - want));
      sum += got;
    }
  EXPECT(maxerr <= 1e-3, "max error %g", maxerr);
  printf("cublasLt matmul m=%d n=%d k=%d checksum=%.3f ok=%d\n", m, n, k, sum, maxerr <= 1e-3);

  CB(cublasLtMatmulPreferenceDestroy(pref));
  CB(cublasLtMatrixLayoutDestroy(la));
  CB(cublasLtMatrixLayoutDestroy(lb));
  CB(cublasLtMatrixLayoutDestroy(lc));
  CB(cublasLtMatrixLayoutDestroy(ld));
  CB(cublasLtMatmulDescDestroy(op));
  CB(cublasLtDestroy(lt));
  CK(cudaStreamDestroy(s));
  for (void* p : {(void*)da, (void*)db, (void*)dc, (void*)dd, work}) CK(cudaFree(p));
  return finish();
}
