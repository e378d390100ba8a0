// 3-D copies: cudaMalloc3D, cudaMemset3D on a sub-box, cudaMemcpy3D between
// host, pitched device memory and 3-D arrays with offsets on both sides, a
// kernel walking the pitched volume, cudaMemcpy3DAsync on a stream and
// cudaMemcpy3DPeer on one device, all checked on the host.
#include <vector>

#include "corpus.h"

__global__ void add_index(cudaPitchedPtr p, int w, int h, int d) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x < w && y < h && z < d) {
    int* row = reinterpret_cast<int*>(static_cast<char*>(p.ptr) + (z * p.ysize + y) * p.pitch);
    row[x] += x + 1000 * y + 100000 * z;
  }
}

int main() {
  const int W = 37, H = 13, D = 7;
  cudaExtent bytes = make_cudaExtent(W * sizeof(int), H, D);
  cudaPitchedPtr p;
  CK(cudaMalloc3D(&p, bytes));
  EXPECT(p.pitch >= W * sizeof(int) && p.xsize == W * sizeof(int) && p.ysize == H, "pitched pointer");
  printf("volume %dx%dx%d pitch=%zu\n", W, H, D, p.pitch);
  CK(cudaMemset3D(p, 0, bytes));
  // 0x01 bytes in the box x 4..11 (ints), y 2..6, z 1..3.
  cudaPitchedPtr box = p;
  box.ptr = static_cast<char*>(p.ptr) + (1 * H + 2) * p.pitch + 4 * sizeof(int);
  CK(cudaMemset3D(box, 1, make_cudaExtent(8 * sizeof(int), 5, 3)));
  dim3 grid((W + 31) / 32, H, D);
  add_index<<<grid, 32>>>(p, W, H, D);
  CK(cudaGetLastError());

  std::vector<int> host(W * H * D);
  cudaMemcpy3DParms down{};
  down.srcPtr = p;
  down.dstPtr = make_cudaPitchedPtr(host.data(), W * sizeof(int), W, H);
  down.extent = bytes;
  down.kind = cudaMemcpyDeviceToHost;
  CK(cudaMemcpy3D(&down));
  int bad = 0;
  for (int z = 0; z < D; ++z)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        bool in_box = x >= 4 && x < 12 && y >= 2 && y < 7 && z >= 1 && z < 4;
        bad += host[(z * H + y) * W + x] != (in_box ? 0x01010101 : 0) + x + 1000 * y + 100000 * z;
      }
  EXPECT(bad == 0, "%d wrong after memset and kernel", bad);
  printf("memset3d + kernel: wrong %d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(host.data(), host.size() * sizeof(int)));

  // Into a 3-D array at an offset, from the pitched volume's interior.
  cudaChannelFormatDesc fi = cudaCreateChannelDesc<int>();
  cudaArray_t a, a2;
  CK(cudaMalloc3DArray(&a, &fi, make_cudaExtent(W, H, D)));
  CK(cudaMalloc3DArray(&a2, &fi, make_cudaExtent(W, H, D)));
  cudaMemcpy3DParms to_array{};
  to_array.srcPtr = p;
  to_array.srcPos = make_cudaPos(3, 1, 2);  // in array elements, an array taking part
  to_array.dstArray = a;
  to_array.dstPos = make_cudaPos(5, 4, 1);
  to_array.extent = make_cudaExtent(20, 8, 4);
  to_array.kind = cudaMemcpyDeviceToDevice;
  CK(cudaMemcpy3D(&to_array));
  // Array to array on one device, by the peer call.
  cudaMemcpy3DPeerParms peer{};
  peer.srcArray = a;
  peer.srcDevice = 0;
  peer.dstArray = a2;
  peer.dstDevice = 0;
  peer.extent = make_cudaExtent(W, H, D);
  CK(cudaMemcpy3DPeer(&peer));
  // The window back to the host asynchronously, into a padded host box.
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  const int HW = 24, HH = 10;
  std::vector<int> pageable(HW * HH * 4, -1);
  cudaMemcpy3DParms back{};
  back.srcArray = a2;
  back.srcPos = make_cudaPos(5, 4, 1);
  back.dstPtr = make_cudaPitchedPtr(pageable.data(), HW * sizeof(int), HW, HH);
  back.dstPos = make_cudaPos(2, 1, 0);  // elements of the array, as the extent
  back.extent = make_cudaExtent(20, 8, 4);
  back.kind = cudaMemcpyDeviceToHost;
  // CUDA's answer for pageable memory, printed so that rgpu must agree.
  printf("async 3-D copy into pageable memory: %s\n", cudaGetErrorName(cudaMemcpy3DAsync(&back, s)));
  CK(cudaStreamSynchronize(s));
  int* window;
  CK(cudaMallocHost(&window, HW * HH * 4 * sizeof(int)));
  for (int i = 0; i < HW * HH * 4; ++i) window[i] = -1;
  back.dstPtr = make_cudaPitchedPtr(window, HW * sizeof(int), HW, HH);
  printf("async 3-D copy into page-locked memory: %s\n", cudaGetErrorName(cudaMemcpy3DAsync(&back, s)));
  CK(cudaStreamSynchronize(s));
  bad = 0;
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < HH; ++y)
      for (int x = 0; x < HW; ++x) {
        int v = window[(z * HH + y) * HW + x];
        bool inside = x >= 2 && x < 22 && y >= 1 && y < 9;
        int want = inside ? host[((z + 2) * H + (y - 1 + 1)) * W + (x - 2 + 3)] : -1;
        bad += v != want;
      }
  EXPECT(bad == 0, "%d wrong in the array window", bad);
  printf("array window 20x8x4: wrong %d\n", bad);

  CK(cudaFreeHost(window));
  CK(cudaStreamDestroy(s));
  CK(cudaFreeArray(a));
  CK(cudaFreeArray(a2));
  CK(cudaFree(p.ptr));
  return finish();
}
