// NPP image ops through the *_Ctx variants, with an NppStreamContext filled
// from cudaGetDeviceProperties for a created stream: nppiAdd_32f_C1R, a 3x3
// nppiFilterBoxBorder_32f_C1R with replicated borders, and a 2x downscale by
// nppiResize_32f_C1R with super sampling (2x2 block means), on 64x48 images
// allocated by nppiMalloc_32f_C1 (pitched). Checked against the CPU.
#include <npp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "corpus.h"

#define CN(call) LIB_CK("NPP", call, NPP_NO_ERROR, corpus_status)

static Npp32f* alloc_image(int w, int h, int* step) {
  Npp32f* p = nppiMalloc_32f_C1(w, h, step);
  if (!p) {
    printf("nppiMalloc_32f_C1(%d, %d) returned NULL\nRESULT FAIL\n", w, h);
    exit(1);
  }
  return p;
}

static void check(const char* what, const std::vector<float>& got, const std::vector<double>& want) {
  double maxerr = 0, sum = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    maxerr = std::max(maxerr, std::fabs(got[i] - want[i]));
    sum += got[i];
  }
  EXPECT(maxerr <= 1e-4, "%s max error %g", what, maxerr);
  printf("%s pixels=%zu ok=%d checksum=%.3f\n", what, got.size(), maxerr <= 1e-4, sum);
}

int main() {
  const int W = 64, H = 48, W2 = W / 2, H2 = H / 2;
  std::vector<float> a(W * H), b(W * H), out(W * H), small_out(W2 * H2);
  uint32_t seed = 99;
  for (auto& v : a) v = float((lcg(seed) >> 16) % 200);
  for (auto& v : b) v = float((lcg(seed) >> 16) % 50) - 25.f;

  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  NppStreamContext ctx{};  // zeroed: the reserved / workspace field must be 0
  ctx.hStream = s;
  CK(cudaGetDevice(&ctx.nCudaDeviceId));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, ctx.nCudaDeviceId));
  ctx.nMultiProcessorCount = prop.multiProcessorCount;
  ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
  ctx.nCudaDevAttrComputeCapabilityMajor = prop.major;
  ctx.nCudaDevAttrComputeCapabilityMinor = prop.minor;
  CK(cudaStreamGetFlags(s, &ctx.nStreamFlags));

  int sa, sb, sc, sd, se;
  Npp32f *da = alloc_image(W, H, &sa), *db = alloc_image(W, H, &sb), *dc = alloc_image(W, H, &sc);
  Npp32f *dd = alloc_image(W, H, &sd), *de = alloc_image(W2, H2, &se);
  const size_t row = W * sizeof(float);
  CK(cudaMemcpy2D(da, sa, a.data(), row, row, H, cudaMemcpyHostToDevice));
  CK(cudaMemcpy2D(db, sb, b.data(), row, row, H, cudaMemcpyHostToDevice));
  const NppiSize size{W, H}, size2{W2, H2};

  // c = a + b
  CN(nppiAdd_32f_C1R_Ctx(da, sa, db, sb, dc, sc, size, ctx));
  // d = 3x3 box mean of c, borders replicated
  CN(nppiFilterBoxBorder_32f_C1R_Ctx(dc, sc, size, NppiPoint{0, 0}, dd, sd, size, NppiSize{3, 3},
                                     NppiPoint{1, 1}, NPP_BORDER_REPLICATE, ctx));
  // e = c downscaled 2x by super sampling
  CN(nppiResize_32f_C1R_Ctx(dc, sc, size, NppiRect{0, 0, W, H}, de, se, size2,
                            NppiRect{0, 0, W2, H2}, NPPI_INTER_SUPER, ctx));
  CK(cudaStreamSynchronize(s));

  std::vector<double> c(W * H), want(W * H), want2(W2 * H2);
  for (int i = 0; i < W * H; ++i) c[i] = double(a[i]) + b[i];
  CK(cudaMemcpy2D(out.data(), row, dc, sc, row, H, cudaMemcpyDeviceToHost));
  check("nppiAdd_32f_C1R", out, c);

  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      double acc = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          acc += c[std::clamp(y + dy, 0, H - 1) * W + std::clamp(x + dx, 0, W - 1)];
      want[y * W + x] = acc / 9;
    }
  CK(cudaMemcpy2D(out.data(), row, dd, sd, row, H, cudaMemcpyDeviceToHost));
  check("nppiFilterBoxBorder_32f_C1R", out, want);

  for (int y = 0; y < H2; ++y)
    for (int x = 0; x < W2; ++x)
      want2[y * W2 + x] = (c[2 * y * W + 2 * x] + c[2 * y * W + 2 * x + 1] +
                           c[(2 * y + 1) * W + 2 * x] + c[(2 * y + 1) * W + 2 * x + 1]) / 4;
  CK(cudaMemcpy2D(small_out.data(), W2 * sizeof(float), de, se, W2 * sizeof(float), H2,
                  cudaMemcpyDeviceToHost));
  check("nppiResize_32f_C1R_super", small_out, want2);

  for (Npp32f* p : {da, db, dc, dd, de}) nppiFree(p);
  CK(cudaStreamDestroy(s));
  return finish();
}
