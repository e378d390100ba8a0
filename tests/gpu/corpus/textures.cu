// Texture objects read by kernels: a 2-D float array with linear filtering
// and normalized coordinates (checked against a host bilinear filter with
// the GPU's 8-bit weight precision), point sampling of unsigned char data
// read as normalized floats, a pitched-memory texture, a 1-D linear integer
// texture via tex1Dfetch, and explicit levels of a mipmapped array.
#include <cmath>
#include <vector>

#include "corpus.h"

__global__ void sample_2d(cudaTextureObject_t t, const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void fetch_1d(cudaTextureObject_t t, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i) * 3;
}

__global__ void sample_lod(cudaTextureObject_t t, float* out, int w, int h, float level) {
  int x = threadIdx.x, y = threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2DLod<float>(t, (x + 0.5f) / w, (y + 0.5f) / h, level);
}

static const int W = 64, H = 48;

static float texel(const std::vector<float>& img, int x, int y) {
  x = x < 0 ? 0 : (x >= W ? W - 1 : x);
  y = y < 0 ? 0 : (y >= H ? H - 1 : y);
  return img[y * W + x];
}

// The GPU's linear filter: weights with 8 fractional bits.
static float bilinear(const std::vector<float>& img, float u, float v) {
  float xb = u * W - 0.5f, yb = v * H - 0.5f;
  float fx = std::floor(xb), fy = std::floor(yb);
  float a = std::round((xb - fx) * 256.f) / 256.f, b = std::round((yb - fy) * 256.f) / 256.f;
  int i = int(fx), j = int(fy);
  return (1 - a) * (1 - b) * texel(img, i, j) + a * (1 - b) * texel(img, i + 1, j) + (1 - a) * b * texel(img, i, j + 1) +
         a * b * texel(img, i + 1, j + 1);
}

static int check_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += !(std::fabs(got[i] - want[i]) <= tol);
  return bad;
}

int main() {
  std::vector<float> img(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) img[y * W + x] = 0.5f + 0.5f * std::sin(x * 0.21f) * std::cos(y * 0.17f);

  // 1. Array, linear filtering, normalized coordinates, clamped.
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaArray_t arr;
  CK(cudaMallocArray(&arr, &fd, W, H));
  CK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td{};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  cudaTextureObject_t tex;
  CK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
  cudaTextureDesc td_back;
  CK(cudaGetTextureObjectTextureDesc(&td_back, tex));
  EXPECT(td_back.filterMode == cudaFilterModeLinear && td_back.normalizedCoords == 1, "texture desc read back");

  const int n = 1000;
  std::vector<float2> at(n);
  for (int i = 0; i < n; ++i) at[i] = make_float2(-0.05f + 1.1f * float((i * 37) % 1000) / 1000.f,
                                                   -0.05f + 1.1f * float((i * 91) % 997) / 997.f);
  float2* d_at;
  float* d_out;
  CK(cudaMalloc(&d_at, n * sizeof(float2)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_at, at.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  sample_2d<<<(n + 127) / 128, 128>>>(tex, d_at, d_out, n);
  CK(cudaGetLastError());
  std::vector<float> got(n), want(n);
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = bilinear(img, at[i].x, at[i].y);
  int bad = check_close(got, want, 2e-3f);
  EXPECT(bad == 0, "%d of %d linear samples off", bad, n);
  printf("linear filtered samples: %d, outside tolerance: %d\n", n, bad);

  // 2. unsigned char read as normalized float, point sampling, texel centres.
  std::vector<unsigned char> bytes(W * H);
  for (int i = 0; i < W * H; ++i) bytes[i] = static_cast<unsigned char>((i * 7) & 0xff);
  cudaChannelFormatDesc bd = cudaCreateChannelDesc<unsigned char>();
  cudaArray_t barr;
  CK(cudaMallocArray(&barr, &bd, W, H));
  CK(cudaMemcpyToArray(barr, 0, 0, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  res.res.array.array = barr;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeNormalizedFloat;
  td.normalizedCoords = 0;
  cudaTextureObject_t btex;
  CK(cudaCreateTextureObject(&btex, &res, &td, nullptr));
  for (int i = 0; i < n; ++i) at[i] = make_float2((i % W) + 0.5f, ((i / W) % H) + 0.5f);
  CK(cudaMemcpy(d_at, at.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  sample_2d<<<(n + 127) / 128, 128>>>(btex, d_at, d_out, n);
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = bytes[((i / W) % H) * W + i % W] / 255.f;
  bad = check_close(got, want, 1e-6f);
  EXPECT(bad == 0, "%d normalized point samples off", bad);
  printf("normalized point samples: %d, wrong: %d\n", n, bad);

  // 3. Pitched device memory as a 2-D texture, point sampled.
  float* pitched;
  size_t pitch;
  CK(cudaMallocPitch((void**)&pitched, &pitch, W * sizeof(float), H));
  CK(cudaMemcpy2D(pitched, pitch, img.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
  cudaResourceDesc pres{};
  pres.resType = cudaResourceTypePitch2D;
  pres.res.pitch2D.devPtr = pitched;
  pres.res.pitch2D.desc = fd;
  pres.res.pitch2D.width = W;
  pres.res.pitch2D.height = H;
  pres.res.pitch2D.pitchInBytes = pitch;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t ptex;
  CK(cudaCreateTextureObject(&ptex, &pres, &td, nullptr));
  sample_2d<<<(n + 127) / 128, 128>>>(ptex, d_at, d_out, n);
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = img[((i / W) % H) * W + i % W];
  bad = check_close(got, want, 0.f);
  EXPECT(bad == 0, "%d pitched samples off", bad);
  printf("pitched texture samples: %d, wrong: %d\n", n, bad);

  // 4. Linear memory, tex1Dfetch of ints.
  const int m = 4096;
  std::vector<int> ints(m), tripled(m);
  for (int i = 0; i < m; ++i) ints[i] = i * 5 - 1000;
  int *d_ints, *d_tripled;
  CK(cudaMalloc(&d_ints, m * sizeof(int)));
  CK(cudaMalloc(&d_tripled, m * sizeof(int)));
  CK(cudaMemcpy(d_ints, ints.data(), m * sizeof(int), cudaMemcpyHostToDevice));
  cudaResourceDesc lres{};
  lres.resType = cudaResourceTypeLinear;
  lres.res.linear.devPtr = d_ints;
  lres.res.linear.desc = cudaCreateChannelDesc<int>();
  lres.res.linear.sizeInBytes = m * sizeof(int);
  cudaTextureDesc ltd{};
  ltd.readMode = cudaReadModeElementType;
  cudaTextureObject_t ltex;
  CK(cudaCreateTextureObject(&ltex, &lres, &ltd, nullptr));
  fetch_1d<<<m / 256, 256>>>(ltex, d_tripled, m);
  CK(cudaMemcpy(tripled.data(), d_tripled, m * sizeof(int), cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < m; ++i) bad += tripled[i] != ints[i] * 3;
  EXPECT(bad == 0, "%d fetches off", bad);
  printf("tex1Dfetch: %d, wrong: %d\n", m, bad);

  // 5. A mipmapped array: each level filled with its own constant, read by
  //    explicit level of detail.
  cudaMipmappedArray_t mip;
  const int levels = 4;
  CK(cudaMallocMipmappedArray(&mip, &fd, make_cudaExtent(32, 16, 0), levels));
  for (int l = 0; l < levels; ++l) {
    cudaArray_t level;
    CK(cudaGetMipmappedArrayLevel(&level, mip, l));
    cudaExtent e;
    CK(cudaArrayGetInfo(nullptr, &e, nullptr, level));
    std::vector<float> fill(e.width * e.height, 10.f * (l + 1));
    CK(cudaMemcpy2DToArray(level, 0, 0, fill.data(), e.width * sizeof(float), e.width * sizeof(float), e.height,
                           cudaMemcpyHostToDevice));
    printf("level %d: %zux%zu\n", l, e.width, e.height);
  }
  cudaResourceDesc mres{};
  mres.resType = cudaResourceTypeMipmappedArray;
  mres.res.mipmap.mipmap = mip;
  cudaTextureDesc mtd{};
  mtd.addressMode[0] = mtd.addressMode[1] = cudaAddressModeClamp;
  mtd.filterMode = cudaFilterModePoint;
  mtd.mipmapFilterMode = cudaFilterModePoint;
  mtd.normalizedCoords = 1;
  mtd.maxMipmapLevelClamp = levels - 1;
  cudaTextureObject_t mtex;
  CK(cudaCreateTextureObject(&mtex, &mres, &mtd, nullptr));
  for (int l = 0; l < levels; ++l) {
    int w = 32 >> l, h = 16 >> l;
    sample_lod<<<1, dim3(w, h)>>>(mtex, d_out, w, h, float(l));
    std::vector<float> lod(w * h);
    CK(cudaMemcpy(lod.data(), d_out, lod.size() * sizeof(float), cudaMemcpyDeviceToHost));
    bad = 0;
    for (float v : lod) bad += v != 10.f * (l + 1);
    EXPECT(bad == 0, "level %d: %d wrong", l, bad);
    printf("lod %d samples: %d, wrong: %d\n", l, w * h, bad);
  }

  CK(cudaDestroyTextureObject(tex));
  CK(cudaDestroyTextureObject(btex));
  CK(cudaDestroyTextureObject(ptex));
  CK(cudaDestroyTextureObject(ltex));
  CK(cudaDestroyTextureObject(mtex));
  CK(cudaFreeMipmappedArray(mip));
  CK(cudaFreeArray(arr));
  CK(cudaFreeArray(barr));
  CK(cudaFree(pitched));
  CK(cudaFree(d_ints));
  CK(cudaFree(d_tripled));
  CK(cudaFree(d_at));
  CK(cudaFree(d_out));
  return finish();
}
