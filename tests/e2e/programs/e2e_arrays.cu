// CUDA arrays through the runtime API: 2-D and 3-D arrays filled and read
// back with offsets and pitches, array-to-array and linear legacy copies,
// mipmapped arrays and their levels, descriptions, and the errors of bad
// handles and extents past an array.
#include <vector>

#include "check.h"

static std::vector<float> pattern(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return v;
}

static void two_d() {
  const size_t w = 37, h = 11;
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaArray_t a, b;
  OK(cudaMallocArray(&a, &f, w, h));
  OK(cudaMallocArray(&b, &f, w, h, cudaArraySurfaceLoadStore));
  cudaChannelFormatDesc got;
  cudaExtent extent;
  unsigned flags = 7;
  OK(cudaArrayGetInfo(&got, &extent, &flags, b));
  CHECK(got.x == 32 && got.y == 0 && got.f == cudaChannelFormatKindFloat);
  CHECK(extent.width == w && extent.height == h && extent.depth == 0 && flags == cudaArraySurfaceLoadStore);
  OK(cudaGetChannelDesc(&got, a));
  CHECK(got.x == 32);

  // The whole image in, from a host buffer with a wider pitch.
  const size_t hpitch = (w + 5) * sizeof(float);
  std::vector<float> host(hpitch / sizeof(float) * h);
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) host[y * (w + 5) + x] = static_cast<float>(y * 1000 + x);
  OK(cudaMemcpy2DToArray(a, 0, 0, host.data(), hpitch, w * sizeof(float), h, cudaMemcpyHostToDevice));
  // A 5x3 window of a at (4, 2) to b at (10, 6), then b's window back.
  OK(cudaMemcpy2DArrayToArray(b, 10 * sizeof(float), 6, a, 4 * sizeof(float), 2, 5 * sizeof(float), 3));
  std::vector<float> window(5 * 3, -1.f);
  OK(cudaMemcpy2DFromArray(window.data(), 5 * sizeof(float), b, 10 * sizeof(float), 6, 5 * sizeof(float), 3,
                           cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t y = 0; y < 3; ++y)
    for (size_t x = 0; x < 5; ++x) bad += window[y * 5 + x] != static_cast<float>((y + 2) * 1000 + x + 4);
  CHECK(bad == 0);

  // Through pitched device memory and back, asynchronously.
  void* d;
  size_t dpitch;
  OK(cudaMallocPitch(&d, &dpitch, w * sizeof(float), h));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  OK(cudaMemcpy2DFromArrayAsync(d, dpitch, a, 0, 0, w * sizeof(float), h, cudaMemcpyDeviceToDevice, s));
  OK(cudaMemcpy2DToArrayAsync(b, 0, 0, d, dpitch, w * sizeof(float), h, cudaMemcpyDefault, s));
  std::vector<float> back(w * h, -1.f);
  OK(cudaMemcpy2DFromArrayAsync(back.data(), w * sizeof(float), b, 0, 0, w * sizeof(float), h,
                                cudaMemcpyDeviceToHost, s));
  OK(cudaStreamSynchronize(s));
  bad = 0;
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) bad += back[y * w + x] != host[y * (w + 5) + x];
  CHECK(bad == 0);

  // Legacy linear copies run on across rows: from the middle of row 1 on.
  std::vector<float> line = pattern(2 * w + 3, 0.5f), line_back(line.size());
  OK(cudaMemcpyToArray(a, 7 * sizeof(float), 1, line.data(), line.size() * sizeof(float), cudaMemcpyHostToDevice));
  OK(cudaMemcpyArrayToArray(b, 7 * sizeof(float), 1, a, 7 * sizeof(float), 1, line.size() * sizeof(float)));
  OK(cudaMemcpyFromArrayAsync(line_back.data(), b, 7 * sizeof(float), 1, line.size() * sizeof(float),
                              cudaMemcpyDeviceToHost, s));
  OK(cudaStreamSynchronize(s));
  CHECK(line_back == line);

  // Past the end of the array: refused, nothing written.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy2DToArray(a, 30 * sizeof(float), 0, host.data(), hpitch,
                                                           8 * sizeof(float), 1, cudaMemcpyHostToDevice));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy2DFromArray(window.data(), 5 * sizeof(float), a, 0, 9,
                                                             5 * sizeof(float), 3, cudaMemcpyDeviceToHost));
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaMemcpyToArray(a, 0, h - 1, line.data(), (w + 1) * sizeof(float), cudaMemcpyHostToDevice));
  // Offsets that split an element.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy2DToArray(a, 2, 0, host.data(), hpitch, 4 * sizeof(float), 1,
                                                           cudaMemcpyHostToDevice));
  OK(cudaStreamDestroy(s));
  OK(cudaFree(d));
  OK(cudaFreeArray(a));
  OK(cudaFreeArray(b));
  // a is gone: its handle is now a bad one.
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaFreeArray(a));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaArrayGetInfo(&got, &extent, &flags, a));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaMemcpy2DToArray(a, 0, 0, host.data(), hpitch, 4, 1,
                                                                    cudaMemcpyHostToDevice));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle,
                cudaFreeArray(reinterpret_cast<cudaArray_t>(&host[0])));
}

static void three_d() {
  const size_t w = 9, h = 5, d = 4;
  cudaChannelFormatDesc f = cudaCreateChannelDesc<int2>();
  CHECK(f.x == 32 && f.y == 32 && f.f == cudaChannelFormatKindSigned);
  cudaArray_t a;
  OK(cudaMalloc3DArray(&a, &f, make_cudaExtent(w, h, d)));
  std::vector<int2> host(w * h * d), back(w * h * d, int2{-1, -1});
  for (size_t i = 0; i < host.size(); ++i) host[i] = int2{static_cast<int>(i), -static_cast<int>(i)};

  cudaMemcpy3DParms up{};
  up.srcPtr = make_cudaPitchedPtr(host.data(), w * sizeof(int2), w, h);
  up.dstArray = a;
  up.extent = make_cudaExtent(w, h, d);
  up.kind = cudaMemcpyHostToDevice;
  OK(cudaMemcpy3D(&up));

  // Into linear 3-D memory with a box offset, through the device.
  cudaPitchedPtr lin{};
  OK(cudaMalloc3D(&lin, make_cudaExtent((w + 2) * sizeof(int2), h + 1, d + 1)));
  CHECK(lin.pitch >= (w + 2) * sizeof(int2) && lin.xsize == (w + 2) * sizeof(int2) && lin.ysize == h + 1);
  OK(cudaMemset3D(lin, 0, make_cudaExtent(lin.xsize, lin.ysize, d + 1)));
  cudaMemcpy3DParms across{};
  across.srcArray = a;
  across.dstPtr = lin;
  across.dstPos = make_cudaPos(2, 1, 1);  // elements: an array takes part
  across.extent = make_cudaExtent(w, h, d);
  across.kind = cudaMemcpyDeviceToDevice;
  OK(cudaMemcpy3D(&across));

  // Back to the host, all of the linear box, asynchronously.
  std::vector<int2> box((w + 2) * (h + 1) * (d + 1), int2{-7, -7});
  cudaMemcpy3DParms down{};
  down.srcPtr = lin;
  down.dstPtr = make_cudaPitchedPtr(box.data(), (w + 2) * sizeof(int2), w + 2, h + 1);
  down.extent = make_cudaExtent((w + 2) * sizeof(int2), h + 1, d + 1);
  down.kind = cudaMemcpyDefault;
  OK(cudaMemcpy3DAsync(&down, 0));
  OK(cudaDeviceSynchronize());
  int bad = 0;
  for (size_t z = 0; z <= d; ++z)
    for (size_t y = 0; y <= h; ++y)
      for (size_t x = 0; x < w + 2; ++x) {
        int2 v = box[(z * (h + 1) + y) * (w + 2) + x];
        bool inside = z >= 1 && y >= 1 && x >= 2;
        int expect = inside ? static_cast<int>(((z - 1) * h + (y - 1)) * w + (x - 2)) : 0;
        bad += v.x != expect || v.y != -expect;
      }
  CHECK(bad == 0);

  // A sub-box of the array to the host with a position on both sides.
  cudaMemcpy3DParms sub{};
  sub.srcArray = a;
  sub.srcPos = make_cudaPos(3, 1, 2);
  sub.dstPtr = make_cudaPitchedPtr(back.data(), w * sizeof(int2), w, h);
  sub.dstPos = make_cudaPos(1, 2, 0);
  sub.extent = make_cudaExtent(4, 3, 2);
  sub.kind = cudaMemcpyDeviceToHost;
  OK(cudaMemcpy3D(&sub));
  bad = 0;
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 4; ++x) {
        int2 v = back[(z * h + y + 2) * w + x + 1];
        bad += v.x != static_cast<int>(((z + 2) * h + y + 1) * w + x + 3);
      }
  CHECK(bad == 0);

  // Batched: two copies of the array's first slice to the host.
  std::vector<int2> first(w * h), first_too(w * h);
  cudaMemcpy3DBatchOp ops[2] = {};
  for (int i = 0; i < 2; ++i) {
    ops[i].src.type = cudaMemcpyOperandTypeArray;
    ops[i].src.op.array.array = a;
    ops[i].dst.type = cudaMemcpyOperandTypePointer;
    ops[i].dst.op.ptr.ptr = i ? first_too.data() : first.data();
    ops[i].extent = make_cudaExtent(w, h, 1);
    ops[i].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  }
  OK(cudaMemcpy3DBatchAsync(2, ops, 0, 0));
  OK(cudaDeviceSynchronize());
  bad = 0;
  for (size_t i = 0; i < w * h; ++i) bad += first[i].x != static_cast<int>(i) || first_too[i].y != -static_cast<int>(i);
  CHECK(bad == 0);

  // Extents past the array or the allocation.
  sub.srcPos = make_cudaPos(6, 0, 0);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy3D(&sub));
  sub.srcPos = make_cudaPos(0, 0, 3);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy3D(&sub));
  across.dstPos = make_cudaPos(2, 1, 2);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy3D(&across));
  // Neither or both of array and pointer on a side.
  cudaMemcpy3DParms none{};
  none.extent = make_cudaExtent(1, 1, 1);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy3D(&none));

  // A memset of slices that do not lie back to back.
  OK(cudaMemset3D(lin, 0xff, make_cudaExtent(3, 2, 3)));
  std::vector<unsigned char> raw(lin.pitch * lin.ysize * (d + 1));
  OK(cudaMemcpy(raw.data(), lin.ptr, raw.size(), cudaMemcpyDeviceToHost));
  bad = 0;
  for (size_t z = 0; z <= d; ++z)
    for (size_t y = 0; y < lin.ysize; ++y)
      for (size_t x = 0; x < 4; ++x) {
        unsigned char v = raw[z * lin.pitch * lin.ysize + y * lin.pitch + x];
        bool set = z < 3 && y < 2 && x < 3;
        bad += set ? v != 0xff : v == 0xff;
      }
  CHECK(bad == 0);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset3D(lin, 0, make_cudaExtent(lin.pitch + 1, 1, 1)));
  OK(cudaFree(lin.ptr));
  OK(cudaFreeArray(a));
}

static void mipmaps() {
  cudaChannelFormatDesc f = cudaCreateChannelDesc<unsigned char>();
  cudaMipmappedArray_t m;
  OK(cudaMallocMipmappedArray(&m, &f, make_cudaExtent(64, 16, 0), 10));
  cudaArray_t l0, l3, l3_again, l6;
  OK(cudaGetMipmappedArrayLevel(&l0, m, 0));
  OK(cudaGetMipmappedArrayLevel(&l3, m, 3));
  OK(cudaGetMipmappedArrayLevel(&l3_again, m, 3));
  CHECK(l3 == l3_again);
  // 64 wide: seven levels (64 .. 1); the ten asked for are clamped.
  OK(cudaGetMipmappedArrayLevel(&l6, m, 6));
  cudaArray_t beyond;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGetMipmappedArrayLevel(&beyond, m, 7));
  cudaExtent e;
  OK(cudaArrayGetInfo(nullptr, &e, nullptr, l3));
  CHECK(e.width == 8 && e.height == 2 && e.depth == 0);
  OK(cudaArrayGetInfo(nullptr, &e, nullptr, l6));
  CHECK(e.width == 1 && e.height == 1);
  std::vector<unsigned char> texels(16), back(16);
  for (int i = 0; i < 16; ++i) texels[i] = static_cast<unsigned char>(200 + i);
  OK(cudaMemcpy2DToArray(l3, 0, 0, texels.data(), 8, 8, 2, cudaMemcpyHostToDevice));
  OK(cudaMemcpy2DFromArray(back.data(), 8, l3, 0, 0, 8, 2, cudaMemcpyDeviceToHost));
  CHECK(back == texels);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy2DToArray(l3, 0, 0, texels.data(), 16, 16, 1, cudaMemcpyHostToDevice));
  // A level belongs to its mipmap: not freed on its own.
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaFreeArray(l0));
  cudaArraySparseProperties sparse;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMipmappedArrayGetSparseProperties(&sparse, m));
  OK(cudaFreeMipmappedArray(m));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaArrayGetInfo(nullptr, &e, nullptr, l3));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaFreeMipmappedArray(m));
}

static void refused() {
  cudaArray_t a;
  cudaChannelFormatDesc three = cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
  EXPECT_STATUS(cudaErrorInvalidChannelDescriptor, cudaMallocArray(&a, &three, 4, 4));
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float4>();
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMallocArray(&a, &f, 0, 4));
  EXPECT_STATUS(cudaErrorNotSupported, cudaMallocArray(&a, &f, 4, 4, cudaArraySparse));
  OK(cudaMallocArray(&a, &f, 4, 4));
  cudaArray_t plane;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaArrayGetPlane(&plane, a, 0));
  cudaArrayMemoryRequirements req;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaArrayGetMemoryRequirements(&req, a, 0));
  OK(cudaFreeArray(a));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaArrayGetPlane(&plane, a, 0));
}

// Copies big enough to go through the staging pipeline in several blocks,
// whose edges fall inside slices.
static void big() {
  const size_t w = 256, h = 100, d = 24;
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaArray_t a;
  OK(cudaMalloc3DArray(&a, &f, make_cudaExtent(w, h, d)));
  std::vector<float> in = pattern(w * h * d, 3.f);
  cudaMemcpy3DParms up{};
  up.srcPtr = make_cudaPitchedPtr(in.data(), w * sizeof(float), w, h);
  up.dstArray = a;
  up.extent = make_cudaExtent(w, h, d);
  up.kind = cudaMemcpyHostToDevice;
  OK(cudaMemcpy3D(&up));
  // Out again into a host box with wider rows and taller slices, at (2, 3, 1).
  const size_t hw = w + 8, hh = h + 5, hd = d + 1;
  std::vector<float> out(hw * hh * hd, -1.f);
  cudaMemcpy3DParms down{};
  down.srcArray = a;
  down.dstPtr = make_cudaPitchedPtr(out.data(), hw * sizeof(float), hw, hh);
  down.dstPos = make_cudaPos(2, 3, 1);
  down.extent = make_cudaExtent(w, h, d);
  down.kind = cudaMemcpyDeviceToHost;
  OK(cudaMemcpy3D(&down));
  size_t bad = 0;
  for (size_t z = 0; z < hd; ++z)
    for (size_t y = 0; y < hh; ++y)
      for (size_t x = 0; x < hw; ++x) {
        bool inside = z >= 1 && y >= 3 && y < h + 3 && x >= 2 && x < w + 2;
        float want = inside ? in[((z - 1) * h + (y - 3)) * w + (x - 2)] : -1.f;
        bad += out[(z * hh + y) * hw + x] != want;
      }
  CHECK(bad == 0);
  // Into pitched 3-D memory at (4 bytes, 2, 1) and back: the same values.
  cudaPitchedPtr p{};
  OK(cudaMalloc3D(&p, make_cudaExtent((w + 1) * sizeof(float), h + 2, d + 1)));
  cudaMemcpy3DParms to_memory = up;
  to_memory.dstArray = nullptr;
  to_memory.dstPtr = p;
  to_memory.dstPos = make_cudaPos(sizeof(float), 2, 1);
  to_memory.extent = make_cudaExtent(w * sizeof(float), h, d);  // no array side: bytes
  OK(cudaMemcpy3D(&to_memory));
  std::vector<float> again(w * h * d, -1.f);
  cudaMemcpy3DParms from_memory{};
  from_memory.srcPtr = p;
  from_memory.srcPos = to_memory.dstPos;
  from_memory.dstPtr = up.srcPtr;
  from_memory.dstPtr.ptr = again.data();
  from_memory.extent = make_cudaExtent(w * sizeof(float), h, d);
  from_memory.kind = cudaMemcpyDeviceToHost;
  OK(cudaMemcpy3D(&from_memory));
  CHECK(again == in);
  OK(cudaFree(p.ptr));
  OK(cudaFreeArray(a));
}

// A device reset destroys the device's arrays: their handles go bad.
static void reset() {
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaArray_t a;
  OK(cudaMallocArray(&a, &f, 8, 8));
  OK(cudaDeviceReset());
  cudaExtent e;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaArrayGetInfo(nullptr, &e, nullptr, a));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaFreeArray(a));
  OK(cudaMallocArray(&a, &f, 8, 8));
  OK(cudaFreeArray(a));
}

int main() {
  two_d();
  three_d();
  mipmaps();
  refused();
  big();
  reset();
  return finish();
}
