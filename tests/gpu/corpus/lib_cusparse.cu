// cuSPARSE generic API: y = alpha * op(A) * x + beta * y for a 1000x1000
// tridiagonal CSR matrix (not symmetric, so A and A^T differ), each op with
// its own cusparseSpMV_bufferSize + external buffer. Small integer values
// keep every result exact, so it matches the CPU whatever the algorithm.
#include <cusparse.h>

#include <cmath>
#include <vector>

#include "corpus.h"

#define CS(call) LIB_CK("cuSPARSE", call, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorName)

int main() {
  const int n = 1000;
  // Row i: A[i][i-1] = -(1 + i % 3), A[i][i] = 4 + i % 5, A[i][i+1] = -2.
  std::vector<int> rowptr(n + 1), col;
  std::vector<float> val;
  for (int i = 0; i < n; ++i) {
    rowptr[i] = (int)col.size();
    if (i > 0) col.push_back(i - 1), val.push_back(-float(1 + i % 3));
    col.push_back(i), val.push_back(float(4 + i % 5));
    if (i + 1 < n) col.push_back(i + 1), val.push_back(-2.f);
  }
  rowptr[n] = (int)col.size();
  const int nnz = rowptr[n];
  std::vector<float> x(n), y0(n);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i % 13 - 6);
    y0[i] = float(i % 7);
  }

  int *drow, *dcol;
  float *dval, *dx, *dy;
  CK(cudaMalloc(&drow, (n + 1) * sizeof(int)));
  CK(cudaMalloc(&dcol, nnz * sizeof(int)));
  CK(cudaMalloc(&dval, nnz * sizeof(float)));
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dy, n * sizeof(float)));
  CK(cudaMemcpy(drow, rowptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dval, val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cusparseHandle_t h;
  CS(cusparseCreate(&h));
  CS(cusparseSetStream(h, s));
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y;
  CS(cusparseCreateCsr(&A, n, n, nnz, drow, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CS(cusparseCreateDnVec(&X, n, dx, CUDA_R_32F));
  CS(cusparseCreateDnVec(&Y, n, dy, CUDA_R_32F));
  const float alpha = 2.f, beta = -1.f;

  for (cusparseOperation_t op : {CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE}) {
    const bool tr = op == CUSPARSE_OPERATION_TRANSPOSE;
    CK(cudaMemcpy(dy, y0.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    size_t bytes = 0;
    CS(cusparseSpMV_bufferSize(h, op, &alpha, A, X, &beta, Y, CUDA_R_32F,
                               CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    void* buf = nullptr;
    if (bytes > 0) CK(cudaMalloc(&buf, bytes));
    CS(cusparseSpMV(h, op, &alpha, A, X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buf));
    CK(cudaStreamSynchronize(s));
    std::vector<float> y(n);
    CK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    if (buf) CK(cudaFree(buf));

    std::vector<double> ax(n, 0.0);  // op(A) * x on the host
    for (int i = 0; i < n; ++i)
      for (int p = rowptr[i]; p < rowptr[i + 1]; ++p) {
        if (tr) ax[col[p]] += double(val[p]) * x[i];
        else ax[i] += double(val[p]) * x[col[p]];
      }
    int bad = 0;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      double want = alpha * ax[i] + beta * y0[i];
      bad += std::abs(double(y[i]) - want) > 1e-4;
      sum += y[i];
    }
    EXPECT(bad == 0, "spmv %s: %d wrong elements", tr ? "A^T" : "A", bad);
    printf("spmv op=%s n=%d nnz=%d mismatches=%d sum=%.1f y[0]=%.1f y[%d]=%.1f\n",
           tr ? "T" : "N", n, nnz, bad, sum, y[0], n - 1, y[n - 1]);
  }

  CS(cusparseDestroySpMat(A));
  CS(cusparseDestroyDnVec(X));
  CS(cusparseDestroyDnVec(Y));
  CS(cusparseDestroy(h));
  CK(cudaStreamDestroy(s));
  for (void* p : {(void*)drow, (void*)dcol, (void*)dval, (void*)dx, (void*)dy}) CK(cudaFree(p));
  return finish();
}
