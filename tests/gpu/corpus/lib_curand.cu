// cuRAND: the host API (Philox4_32_10 generator, fixed seed) draws 1M uniform
// and 1M normal floats on a stream; their means and variances must be in
// range. The device API (curand_kernel.h: curand_init / curand_uniform) draws
// per-thread uniforms with a fixed seed; a second launch must repeat them bit
// for bit. Checksums of the bits are printed: a fixed seed fixes the output.
#include <curand.h>
#include <curand_kernel.h>

#include <cmath>
#include <vector>

#include "corpus.h"

#define CR(call) LIB_CK("cuRAND", call, CURAND_STATUS_SUCCESS, corpus_status)

__global__ void draw(unsigned long long seed, float* out, int per_thread) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t st;
  curand_init(seed, tid, 0, &st);  // subsequence = thread id: independent streams
  for (int i = 0; i < per_thread; ++i) out[size_t(tid) * per_thread + i] = curand_uniform(&st);
}

static void moments(const std::vector<float>& v, double& mean, double& var) {
  double s = 0, s2 = 0;
  for (float x : v) s += x;
  mean = s / v.size();
  for (float x : v) s2 += (x - mean) * (x - mean);
  var = s2 / (v.size() - 1);
}

int main() {
  const size_t n = 1 << 20;
  float* d;
  CK(cudaMalloc(&d, n * sizeof(float)));
  std::vector<float> h(n);
  double mean, var;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  curandGenerator_t gen;
  CR(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  CR(curandSetStream(gen, s));
  CR(curandSetPseudoRandomGeneratorSeed(gen, 20240601ull));
  CR(curandGenerateUniform(gen, d, n));
  CK(cudaMemcpyAsync(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  moments(h, mean, var);
  int out_of_range = 0;
  for (float x : h) out_of_range += !(x > 0.f && x <= 1.f);  // curand's uniform is (0, 1]
  EXPECT(out_of_range == 0, "%d uniforms outside (0,1]", out_of_range);
  EXPECT(std::fabs(mean - 0.5) < 0.005, "uniform mean %f", mean);
  EXPECT(std::fabs(var - 1.0 / 12) < 0.002, "uniform variance %f", var);
  printf("host uniform n=%zu mean=%.3f var=%.4f checksum=%016llx\n", n, mean, var,
         (unsigned long long)fnv1a(h.data(), n * sizeof(float)));

  CR(curandGenerateNormal(gen, d, n, 0.0f, 1.0f));  // n must be even: it is
  CK(cudaMemcpyAsync(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  moments(h, mean, var);
  EXPECT(std::fabs(mean) < 0.01, "normal mean %f", mean);
  EXPECT(std::fabs(var - 1.0) < 0.02, "normal variance %f", var);
  printf("host normal n=%zu mean=%.2f var=%.2f checksum=%016llx\n", n, std::fabs(mean), var,
         (unsigned long long)fnv1a(h.data(), n * sizeof(float)));
  CR(curandDestroyGenerator(gen));

  // Device API: 4096 threads x 64 draws.
  const int threads = 4096, per_thread = 64, total = threads * per_thread;
  std::vector<float> a(total), b(total);
  for (auto* dst : {&a, &b}) {
    CK(cudaMemset(d, 0, total * sizeof(float)));
    draw<<<threads / 256, 256, 0, s>>>(99ull, d, per_thread);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(dst->data(), d, total * sizeof(float), cudaMemcpyDeviceToHost));
  }
  moments(a, mean, var);
  out_of_range = 0;
  for (float x : a) out_of_range += !(x > 0.f && x <= 1.f);
  int differ = 0;
  for (int i = 0; i < total; ++i) differ += a[i] != b[i];
  EXPECT(out_of_range == 0, "%d device uniforms outside (0,1]", out_of_range);
  EXPECT(differ == 0, "%d draws differ between two launches with one seed", differ);
  EXPECT(std::fabs(mean - 0.5) < 0.005, "device uniform mean %f", mean);
  EXPECT(std::fabs(var - 1.0 / 12) < 0.002, "device uniform variance %f", var);
  printf("device uniform n=%d mean=%.3f var=%.4f repeat_ok=%d checksum=%016llx\n", total, mean,
         var, differ == 0, (unsigned long long)fnv1a(a.data(), total * sizeof(float)));

  CK(cudaStreamDestroy(s));
  CK(cudaFree(d));
  return finish();
}
