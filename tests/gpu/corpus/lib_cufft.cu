// cuFFT: a 1-D C2C forward + inverse round trip of 4096 points (cuFFT does
// not normalise: inverse(forward(x)) = N * x), a few forward bins checked
// against a CPU DFT, and a 2-D R2C 64x64 transform checked on a few bins
// against a naive CPU DFT. Inputs are small integers.
#include <cufft.h>

#include <cmath>
#include <complex>
#include <vector>

#include "corpus.h"

#define CF(call) LIB_CK("cuFFT", call, CUFFT_SUCCESS, corpus_status)

using cd = std::complex<double>;
static const double kPi = 3.14159265358979323846;

int main() {
  uint32_t seed = 4242;
  auto small = [&](int range) { return float(int(lcg(seed) >> 16) % range - range / 2); };
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  {  // 1-D C2C, 4096 points.
    const int n = 4096;
    std::vector<cufftComplex> x(n), X(n), y(n);
    double norm1 = 0;
    for (auto& v : x) {
      v.x = small(17);
      v.y = small(17);
      norm1 += std::fabs(v.x) + std::fabs(v.y);
    }
    cufftComplex* d;
    CK(cudaMalloc(&d, n * sizeof(cufftComplex)));
    CK(cudaMemcpy(d, x.data(), n * sizeof(cufftComplex), cudaMemcpyHostToDevice));
    cufftHandle plan;
    CF(cufftPlan1d(&plan, n, CUFFT_C2C, 1));
    CF(cufftSetStream(plan, s));
    CF(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
    CK(cudaMemcpyAsync(X.data(), d, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost, s));
    CF(cufftExecC2C(plan, d, d, CUFFT_INVERSE));
    CK(cudaMemcpyAsync(y.data(), d, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    // Forward bins against a CPU DFT (exp(-2 pi i jk/n)).
    double bin_err = 0;
    for (int k : {0, 1, 7, 1000, 2048, 4095}) {
      cd acc = 0;
      for (int j = 0; j < n; ++j)
        acc += cd(x[j].x, x[j].y) * std::polar(1.0, -2 * kPi * double((size_t(j) * k) % n) / n);
      bin_err = std::fmax(bin_err, std::abs(acc - cd(X[k].x, X[k].y)));
    }
    // Round trip: y / n == x.
    double rt_err = 0, sum = 0;
    for (int j = 0; j < n; ++j) {
      rt_err = std::fmax(rt_err, std::fabs(y[j].x / n - x[j].x) + std::fabs(y[j].y / n - x[j].y));
      sum += y[j].x / n + 2.0 * y[j].y / n;
    }
    EXPECT(bin_err <= 1e-5 * norm1, "c2c forward bin error %g (scale %g)", bin_err, norm1);
    EXPECT(rt_err <= 1e-3, "c2c round trip error %g", rt_err);
    printf("c2c n=%d bins_ok=%d roundtrip_ok=%d roundtrip_checksum=%.3f dc=(%.1f,%.1f)\n", n,
           bin_err <= 1e-5 * norm1, rt_err <= 1e-3, sum, X[0].x, X[0].y);
    CF(cufftDestroy(plan));
    CK(cudaFree(d));
  }
  {  // 2-D R2C, 64x64 (row-major, nx rows of ny): output nx x (ny/2+1).
    const int nx = 64, ny = 64, nyc = ny / 2 + 1;
    std::vector<float> x(nx * ny);
    std::vector<cufftComplex> X(nx * nyc);
    double norm1 = 0;
    for (auto& v : x) {
      v = small(11);
      norm1 += std::fabs(v);
    }
    float* din;
    cufftComplex* dout;
    CK(cudaMalloc(&din, x.size() * sizeof(float)));
    CK(cudaMalloc(&dout, X.size() * sizeof(cufftComplex)));
    CK(cudaMemcpy(din, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    cufftHandle plan;
    CF(cufftPlan2d(&plan, nx, ny, CUFFT_R2C));
    CF(cufftSetStream(plan, s));
    CF(cufftExecR2C(plan, din, dout));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(X.data(), dout, X.size() * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
    double err = 0;
    const int bins[][2] = {{0, 0}, {0, 32}, {1, 2}, {5, 17}, {32, 0}, {63, 32}, {40, 9}};
    for (auto& b : bins) {
      cd acc = 0;
      for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j)
          acc += double(x[i * ny + j]) *
                 std::polar(1.0, -2 * kPi * (double(i * b[0] % nx) / nx + double(j * b[1] % ny) / ny));
      const cufftComplex& g = X[b[0] * nyc + b[1]];
      err = std::fmax(err, std::abs(acc - cd(g.x, g.y)));
    }
    EXPECT(err <= 1e-5 * norm1, "r2c 2-D bin error %g (scale %g)", err, norm1);
    double mag = 0;
    for (auto& v : X) mag += std::fabs(v.x) + std::fabs(v.y);
    printf("r2c_2d %dx%d bins_ok=%d dc=%.1f sum_abs=%.0f\n", nx, ny, err <= 1e-5 * norm1, X[0].x, mag);
    CF(cufftDestroy(plan));
    CK(cudaFree(din));
    CK(cudaFree(dout));
  }
  CK(cudaStreamDestroy(s));
  return finish();
}
