// Surface objects: kernels write a 2-D float4 array and a 3-D int array with
// surf2Dwrite / surf3Dwrite, read them back with surf2Dread into linear
// memory, and the host checks both the arrays (copied out) and the reads.
#include <vector>

#include "corpus.h"

__global__ void write_2d(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite(make_float4(x, y, x * y, x - y), s, x * sizeof(float4), y);
}

__global__ void read_2d(cudaSurfaceObject_t s, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float4 v = surf2Dread<float4>(s, x * sizeof(float4), y);
    out[y * w + x] = v.x + v.y + v.z + v.w;
  }
}

__global__ void write_3d(cudaSurfaceObject_t s, int w, int h, int d) {
  int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  if (x < w && y < h && z < d) {
    int old = surf3Dread<int>(s, x * sizeof(int), y, z);
    surf3Dwrite(old * 2 + x + 100 * y + 10000 * z, s, x * sizeof(int), y, z);
  }
}

int main() {
  const int w = 50, h = 30;
  cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
  cudaArray_t a;
  CK(cudaMallocArray(&a, &f4, w, h, cudaArraySurfaceLoadStore));
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaSurfaceObject_t s;
  CK(cudaCreateSurfaceObject(&s, &res));
  cudaResourceDesc back_desc;
  CK(cudaGetSurfaceObjectResourceDesc(&back_desc, s));
  EXPECT(back_desc.resType == cudaResourceTypeArray && back_desc.res.array.array == a, "resource desc read back");
  dim3 block(16, 8), grid((w + 15) / 16, (h + 7) / 8);
  write_2d<<<grid, block>>>(s, w, h);
  CK(cudaGetLastError());
  std::vector<float4> img(w * h);
  CK(cudaMemcpy2DFromArray(img.data(), w * sizeof(float4), a, 0, 0, w * sizeof(float4), h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float4 v = img[y * w + x];
      bad += v.x != x || v.y != y || v.z != x * y || v.w != x - y;
    }
  EXPECT(bad == 0, "%d texels written wrong", bad);
  float* d_sum;
  CK(cudaMalloc(&d_sum, w * h * sizeof(float)));
  read_2d<<<grid, block>>>(s, d_sum, w, h);
  std::vector<float> sum(w * h);
  CK(cudaMemcpy(sum.data(), d_sum, sum.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int bad_reads = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) bad_reads += sum[y * w + x] != float(2 * x + x * y);
  EXPECT(bad_reads == 0, "%d reads wrong", bad_reads);
  printf("surface 2-D %dx%d float4: written wrong %d, read wrong %d\n", w, h, bad, bad_reads);

  // 3-D int array: filled from the host, doubled and tagged by a kernel.
  const int W = 20, H = 6, D = 5;
  cudaChannelFormatDesc fi = cudaCreateChannelDesc<int>();
  cudaArray_t v;
  CK(cudaMalloc3DArray(&v, &fi, make_cudaExtent(W, H, D), cudaArraySurfaceLoadStore));
  std::vector<int> vol(W * H * D), out(W * H * D);
  for (int i = 0; i < W * H * D; ++i) vol[i] = i;
  cudaMemcpy3DParms up{};
  up.srcPtr = make_cudaPitchedPtr(vol.data(), W * sizeof(int), W, H);
  up.dstArray = v;
  up.extent = make_cudaExtent(W, H, D);
  up.kind = cudaMemcpyHostToDevice;
  CK(cudaMemcpy3D(&up));
  res.res.array.array = v;
  cudaSurfaceObject_t s3;
  CK(cudaCreateSurfaceObject(&s3, &res));
  write_3d<<<dim3(H, D), W>>>(s3, W, H, D);
  CK(cudaGetLastError());
  cudaMemcpy3DParms down{};
  down.srcArray = v;
  down.dstPtr = make_cudaPitchedPtr(out.data(), W * sizeof(int), W, H);
  down.extent = make_cudaExtent(W, H, D);
  down.kind = cudaMemcpyDeviceToHost;
  CK(cudaMemcpy3D(&down));
  bad = 0;
  for (int z = 0; z < D; ++z)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        int i = (z * H + y) * W + x;
        bad += out[i] != vol[i] * 2 + x + 100 * y + 10000 * z;
      }
  EXPECT(bad == 0, "%d voxels wrong", bad);
  printf("surface 3-D %dx%dx%d int: wrong %d\n", W, H, D, bad);

  CK(cudaDestroySurfaceObject(s));
  CK(cudaDestroySurfaceObject(s3));
  CK(cudaFreeArray(a));
  CK(cudaFreeArray(v));
  CK(cudaFree(d_sum));
  return finish();
}
