// Tensor maps through the driver API and the Hopper tensor memory
// accelerator: cuTensorMapEncodeTiled describes a 2-D float matrix in device
// memory, kernels take it as a __grid_constant__ parameter and load 16 x 8
// tiles into shared memory with cp.async.bulk.tensor (CCCL's
// cuda::device::experimental wrappers, as the CUDA programming guide shows),
// including a tile partly outside the matrix (zero-filled), and again after
// cuTensorMapReplaceAddress points the map at a second matrix.
#include <cuda/barrier>
#include <vector>

#include "driver_corpus.h"

using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

constexpr int kWidth = 64, kHeight = 32;   // the matrix, in floats
constexpr int kBoxW = 16, kBoxH = 8;       // one tile
constexpr int kTile = kBoxW * kBoxH;

// Each block loads the tile at (blockIdx * box + origin) and copies it out.
__global__ void load_tiles(const __grid_constant__ CUtensorMap map, int ox, int oy, float* out) {
  __shared__ alignas(128) float tile[kBoxH][kBoxW];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cde::fence_proxy_async_shared_cta();  // the barrier, visible to the copy engine
  }
  __syncthreads();
  int x = blockIdx.x * kBoxW + ox, y = blockIdx.y * kBoxH + oy;
  barrier::arrival_token token;
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_global_to_shared(&tile, &map, x, y, bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
  } else {
    token = bar.arrive();
  }
  bar.wait(std::move(token));
  float* dst = out + (blockIdx.y * gridDim.x + blockIdx.x) * kTile;
  for (int i = threadIdx.x; i < kTile; i += blockDim.x) dst[i] = tile[i / kBoxW][i % kBoxW];
}

// Runs load_tiles over grid gx x gy from (ox, oy) and counts the elements
// that differ from the matrix (zero outside it); `outside` gets how many
// elements lay outside.
static int run(const CUtensorMap& map, const std::vector<float>& matrix, int gx, int gy, int ox, int oy,
               int* outside) {
  size_t n = size_t(gx) * gy * kTile;
  float* d_out;
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemset(d_out, 0xff, n * sizeof(float)));
  load_tiles<<<dim3(gx, gy), 128>>>(map, ox, oy, d_out);
  CK(cudaGetLastError());
  std::vector<float> out(n);
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaFree(d_out));
  int wrong = 0;
  *outside = 0;
  for (int by = 0; by < gy; ++by)
    for (int bx = 0; bx < gx; ++bx)
      for (int i = 0; i < kTile; ++i) {
        int x = bx * kBoxW + ox + i % kBoxW, y = by * kBoxH + oy + i / kBoxW;
        bool in = x >= 0 && x < kWidth && y >= 0 && y < kHeight;
        if (!in) ++*outside;
        float want = in ? matrix[size_t(y) * kWidth + x] : 0.f;
        if (out[(size_t(by) * gx + bx) * kTile + i] != want) ++wrong;
      }
  return wrong;
}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  std::vector<float> a(kWidth * kHeight), b(kWidth * kHeight);
  for (int i = 0; i < kWidth * kHeight; ++i) {
    a[i] = float(i % 1000) + 0.25f;
    b[i] = -float((i * 7) % 513);
  }
  float *d_a, *d_b;
  CK(cudaMalloc(&d_a, a.size() * sizeof(float)));
  CK(cudaMalloc(&d_b, b.size() * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));

  alignas(64) CUtensorMap map;
  cuuint64_t dims[2] = {kWidth, kHeight};
  cuuint64_t strides[1] = {kWidth * sizeof(float)};
  cuuint32_t box[2] = {kBoxW, kBoxH};
  cuuint32_t ones[2] = {1, 1};
  auto encode = [&](void* at) {
    return cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, at, dims, strides, box, ones,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  // Documented errors first: a base address not 16-byte aligned, a stride
  // not a multiple of 16.
  printf("misaligned address: %s\n", cu_error_name(encode(reinterpret_cast<char*>(d_a) + 4)));
  strides[0] = kWidth * sizeof(float) + 4;
  printf("stride not a multiple of 16: %s\n", cu_error_name(encode(d_a)));
  strides[0] = kWidth * sizeof(float);
  CU(encode(d_a));

  int outside = 0;
  int wrong = run(map, a, kWidth / kBoxW, kHeight / kBoxH, 0, 0, &outside);
  EXPECT(wrong == 0 && outside == 0, "%d of the whole matrix's elements wrong", wrong);
  printf("tiles of the matrix: %d tiles, %d elements wrong\n", (kWidth / kBoxW) * (kHeight / kBoxH), wrong);

  // A tile 8 columns and 4 rows over the bottom-right corner.
  wrong = run(map, a, 1, 1, kWidth - kBoxW / 2, kHeight - kBoxH / 2, &outside);
  EXPECT(wrong == 0, "%d elements of the corner tile wrong", wrong);
  printf("corner tile: %d elements outside the matrix read as zero, %d wrong\n", outside, wrong);

  CU(cuTensorMapReplaceAddress(&map, d_b));
  wrong = run(map, b, kWidth / kBoxW, kHeight / kBoxH, 0, 0, &outside);
  EXPECT(wrong == 0, "%d elements of the second matrix wrong", wrong);
  printf("after cuTensorMapReplaceAddress: %d elements wrong\n", wrong);
  printf("replace with a misaligned address: %s\n",
         cu_error_name(cuTensorMapReplaceAddress(&map, reinterpret_cast<char*>(d_b) + 8)));

  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  return finish();
}
