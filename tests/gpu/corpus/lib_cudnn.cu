// cuDNN (legacy convolution API): an NCHW float 3x3 convolution, padding 1,
// stride 1, N=2 C=3 16x16 -> K=4 channels, with the algorithm from
// cudnnGetConvolutionForwardAlgorithm_v7 and its workspace, then a
// per-channel bias by cudnnAddTensor, checked against a CPU convolution.
#include <cudnn.h>

#include <cmath>
#include <vector>

#include "corpus.h"

#define CD(call) LIB_CK("cuDNN", call, CUDNN_STATUS_SUCCESS, cudnnGetErrorString)

int main() {
  const int N = 2, C = 3, H = 16, W = 16, K = 4, R = 3, S = 3, pad = 1;
  std::vector<float> x(N * C * H * W), w(K * C * R * S), bias(K);
  uint32_t seed = 2718;
  auto small = [&](int range) { return float(int(lcg(seed) >> 16) % range - range / 2); };
  for (auto& v : x) v = small(7);
  for (auto& v : w) v = small(5);
  for (int k = 0; k < K; ++k) bias[k] = 0.5f * k - 1.f;

  cudnnHandle_t h;
  CD(cudnnCreate(&h));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CD(cudnnSetStream(h, s));
  cudnnTensorDescriptor_t xd, yd, bd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  CD(cudnnCreateTensorDescriptor(&xd));
  CD(cudnnCreateTensorDescriptor(&yd));
  CD(cudnnCreateTensorDescriptor(&bd));
  CD(cudnnCreateFilterDescriptor(&wd));
  CD(cudnnCreateConvolutionDescriptor(&cd));
  CD(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
  CD(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
  CD(cudnnSetConvolution2dDescriptor(cd, pad, pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                     CUDNN_DATA_FLOAT));
  int on, oc, oh, ow;
  CD(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
  EXPECT(on == N && oc == K && oh == H && ow == W, "output dims %dx%dx%dx%d", on, oc, oh, ow);
  printf("conv output dims %dx%dx%dx%d\n", on, oc, oh, ow);
  CD(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));
  CD(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, K, 1, 1));

  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int found = 0;
  CD(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &found, perf));
  if (found < 1 || perf[0].status != CUDNN_STATUS_SUCCESS) {
    printf("cudnnGetConvolutionForwardAlgorithm_v7 returned no usable algorithm (%d)\n", found);
    printf("RESULT FAIL\n");
    return 1;
  }
  cudnnConvolutionFwdAlgo_t algo = perf[0].algo;
  size_t ws_bytes = 0;
  CD(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &ws_bytes));

  const size_t ny = size_t(on) * oc * oh * ow;
  float *dx, *dw, *db, *dy;
  void* ws = nullptr;
  CK(cudaMalloc(&dx, x.size() * sizeof(float)));
  CK(cudaMalloc(&dw, w.size() * sizeof(float)));
  CK(cudaMalloc(&db, bias.size() * sizeof(float)));
  CK(cudaMalloc(&dy, ny * sizeof(float)));
  if (ws_bytes) CK(cudaMalloc(&ws, ws_bytes));
  CK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  const float one = 1.f, zero = 0.f;
  CD(cudnnConvolutionForward(h, &one, xd, dx, wd, dw, cd, algo, ws, ws_bytes, &zero, yd, dy));
  CD(cudnnAddTensor(h, &one, bd, db, &one, yd, dy));
  CK(cudaStreamSynchronize(s));
  std::vector<float> y(ny);
  CK(cudaMemcpy(y.data(), dy, ny * sizeof(float), cudaMemcpyDeviceToHost));

  double maxerr = 0, sum = 0;
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < H; ++i)
        for (int j = 0; j < W; ++j) {
          double acc = bias[k];
          for (int c = 0; c < C; ++c)
            for (int r = 0; r < R; ++r)
              for (int q = 0; q < S; ++q) {
                int yi = i + r - pad, xj = j + q - pad;
                if (yi < 0 || yi >= H || xj < 0 || xj >= W) continue;
                acc += double(x[((n * C + c) * H + yi) * W + xj]) * w[((k * C + c) * R + r) * S + q];
              }
          double got = y[((n * K + k) * H + i) * W + j];
          maxerr = std::fmax(maxerr, std::fabs(got - acc));
          sum += got;
        }
  EXPECT(maxerr <= 1e-3, "conv max error %g", maxerr);
  printf("conv_fwd+bias n=%zu ok=%d checksum=%.1f\n", ny, maxerr <= 1e-3, sum);

  CD(cudnnDestroyTensorDescriptor(xd));
  CD(cudnnDestroyTensorDescriptor(yd));
  CD(cudnnDestroyTensorDescriptor(bd));
  CD(cudnnDestroyFilterDescriptor(wd));
  CD(cudnnDestroyConvolutionDescriptor(cd));
  CD(cudnnDestroy(h));
  CK(cudaStreamDestroy(s));
  for (void* p : {(void*)dx, (void*)dw, (void*)db, (void*)dy, ws})
    if (p) CK(cudaFree(p));
  return finish();
}
