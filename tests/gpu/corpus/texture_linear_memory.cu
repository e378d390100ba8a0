// Texture objects on plain cudaMalloc'd memory: a float2 linear texture set
// to filter linearly and wrap, whose declared size runs past its allocation
// (the driver allows it; a kernel reads only what exists), fetched by
// index; and a pitched float texture sampled between texels, where linear
// filtering interpolates.
#include <cmath>
#include <vector>

#include "corpus.h"

__global__ void fetch_pairs(cudaTextureObject_t t, float2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float2>(t, i);
}

__global__ void sample_between(cudaTextureObject_t t, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w - 1 && y < h) out[y * w + x] = tex2D<float>(t, x + 1.0f, y + 0.5f);  // halfway between x and x+1
}

int main() {
  const int n = 1 << 16;
  std::vector<float2> pairs(n);
  for (int i = 0; i < n; ++i) pairs[i] = make_float2(i * 0.5f, -i * 0.25f);
  float2 *d_pairs, *d_out;
  CK(cudaMalloc(&d_pairs, n * sizeof(float2)));
  CK(cudaMalloc(&d_out, n * sizeof(float2)));
  CK(cudaMemcpy(d_pairs, pairs.data(), n * sizeof(float2), cudaMemcpyHostToDevice));

  cudaResourceDesc res{};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = d_pairs;
  res.res.linear.sizeInBytes = (n + 1024) * sizeof(float2);  // past the allocation, as convolutionFFT2D does
  res.res.linear.desc = cudaCreateChannelDesc<float2>();
  cudaTextureDesc tex{};
  tex.filterMode = cudaFilterModeLinear;
  tex.addressMode[0] = cudaAddressModeWrap;
  tex.readMode = cudaReadModeElementType;
  cudaTextureObject_t t;
  CK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
  fetch_pairs<<<n / 256, 256>>>(t, d_out, n);
  CK(cudaGetLastError());
  std::vector<float2> back(n);
  CK(cudaMemcpy(back.data(), d_out, n * sizeof(float2), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += back[i].x != pairs[i].x || back[i].y != pairs[i].y;
  EXPECT(bad == 0, "%d fetched pairs differ", bad);
  printf("linear float2 texture: mismatches=%d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(back.data(), n * sizeof(float2)));
  cudaResourceDesc res_back;
  CK(cudaGetTextureObjectResourceDesc(&res_back, t));
  printf("resource back: type=%d size=%zu channels=%d,%d\n", (int)res_back.resType, res_back.res.linear.sizeInBytes,
         res_back.res.linear.desc.x, res_back.res.linear.desc.y);
  CK(cudaDestroyTextureObject(t));

  const int w = 256, h = 64;
  std::vector<float> img(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img[y * w + x] = float(x * 2 + y * 1000);
  float* d_img;
  size_t pitch;
  CK(cudaMallocPitch(&d_img, &pitch, w * sizeof(float), h));
  CK(cudaMemcpy2D(d_img, pitch, img.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
  cudaResourceDesc pres{};
  pres.resType = cudaResourceTypePitch2D;
  pres.res.pitch2D.devPtr = d_img;
  pres.res.pitch2D.desc = cudaCreateChannelDesc<float>();
  pres.res.pitch2D.width = w;
  pres.res.pitch2D.height = h;
  pres.res.pitch2D.pitchInBytes = pitch;
  cudaTextureDesc ptex{};
  ptex.filterMode = cudaFilterModeLinear;
  ptex.addressMode[0] = ptex.addressMode[1] = cudaAddressModeClamp;
  ptex.readMode = cudaReadModeElementType;
  cudaTextureObject_t pt;
  CK(cudaCreateTextureObject(&pt, &pres, &ptex, nullptr));
  float* d_samples;
  CK(cudaMalloc(&d_samples, w * h * sizeof(float)));
  CK(cudaMemset(d_samples, 0, w * h * sizeof(float)));
  sample_between<<<dim3(1, h), w>>>(pt, d_samples, w, h);
  CK(cudaGetLastError());
  std::vector<float> samples(w * h);
  CK(cudaMemcpy(samples.data(), d_samples, w * h * sizeof(float), cudaMemcpyDeviceToHost));
  int off = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w - 1; ++x)  // halfway between texels x and x+1: their mean (9-bit filter weights are exact at 0.5)
      off += std::fabs(samples[y * w + x] - (img[y * w + x] + img[y * w + x + 1]) / 2) > 1e-3f;
  EXPECT(off == 0, "%d filtered samples off", off);
  printf("pitched linear filtering: off=%d sample(10,3)=%.2f\n", off, samples[3 * w + 10]);
  CK(cudaDestroyTextureObject(pt));
  CK(cudaFree(d_samples));
  CK(cudaFree(d_img));
  CK(cudaFree(d_out));
  CK(cudaFree(d_pairs));
  return finish();
}
