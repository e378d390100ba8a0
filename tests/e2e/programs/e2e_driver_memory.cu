// Driver API memory of issue 4: stream-ordered allocation and pools
// (cuMemAllocAsync, cuMemPool*, the device and location pool queries),
// 16- and 32-bit 2-D memsets, peers between the primary contexts of two GPUs
// of one server, and mapped host memory (in place over shm, coherent in software over tcp).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "driver_check.h"

static void pools() {
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUmemoryPool pool = nullptr, current = nullptr, fallback = nullptr;
  CU_OK(cuDeviceGetDefaultMemPool(&fallback, 0));
  CHECK(fallback != nullptr);
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CU_OK(cuMemPoolCreate(&pool, &props));
  cuuint64_t threshold = 1 << 20, read = 0;
  CU_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  CU_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &read));
  CHECK(read == threshold);

  const size_t n = 4096;
  CUdeviceptr a = 0, b = 0;
  CU_OK(cuMemAllocAsync(&a, n, stream));
  CU_OK(cuMemAllocFromPoolAsync(&b, n, pool, stream));
  CU_OK(cuMemsetD32Async(a, 0x01020304u, n / 4, stream));
  CU_OK(cuMemcpyDtoDAsync(b, a, n, stream));
  std::vector<unsigned> back(n / 4);
  CU_OK(cuMemcpyDtoHAsync(back.data(), b, n, stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(back[0] == 0x01020304u && back[n / 4 - 1] == 0x01020304u);
  CU_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &read));
  CHECK(read >= n);
  CU_OK(cuMemFreeAsync(a, stream));
  CU_OK(cuMemFreeAsync(b, stream));
  CU_OK(cuStreamSynchronize(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(b, stream));
  CU_OK(cuMemPoolTrimTo(pool, 0));

  // The device's current pool, by device and by location.
  CU_OK(cuDeviceSetMemPool(0, pool));
  CU_OK(cuDeviceGetMemPool(&current, 0));
  CHECK(current == pool);
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = 0;
  CU_OK(cuMemGetMemPool(&current, &where, CU_MEM_ALLOCATION_TYPE_PINNED));
  CHECK(current == pool);
  CU_OK(cuMemSetMemPool(&where, CU_MEM_ALLOCATION_TYPE_PINNED, fallback));
  CU_OK(cuDeviceGetMemPool(&current, 0));
  CHECK(current == fallback);
  CU_OK(cuMemGetDefaultMemPool(&current, &where, CU_MEM_ALLOCATION_TYPE_PINNED));
  CHECK(current == fallback);
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemGetDefaultMemPool(&current, &host, CU_MEM_ALLOCATION_TYPE_PINNED));

  // Access: the owner reads and writes; the other GPU of the server as set.
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CU_OK(cuMemPoolGetAccess(&flags, pool, &where));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CUmemLocation other{};
  other.type = CU_MEM_LOCATION_TYPE_DEVICE;
  other.id = 1;
  CU_OK(cuMemPoolGetAccess(&flags, pool, &other));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CUmemAccessDesc desc{};
  desc.location = other;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_OK(cuMemPoolSetAccess(pool, &desc, 1));
  CU_OK(cuMemPoolGetAccess(&flags, pool, &other));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  desc.location.id = 9;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuMemPoolSetAccess(pool, &desc, 1));

  CU_OK(cuMemPoolDestroy(pool));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPoolDestroy(pool));
  CU_OK(cuStreamDestroy(stream));
}

static void memsets_2d() {
  const size_t width = 33, height = 5;
  CUdeviceptr d;
  size_t pitch = 0;
  CU_OK(cuMemAllocPitch(&d, &pitch, width * 4, height, 4));
  std::vector<unsigned> rows(pitch / 4 * height);
  CU_OK(cuMemsetD2D8(d, pitch, 0, pitch, height));
  CU_OK(cuMemsetD2D32(d, pitch, 0xdeadbeefu, width, height));
  CU_OK(cuMemcpyDtoH(rows.data(), d, pitch * height));
  for (size_t r = 0; r < height; ++r) {
    CHECK(rows[r * pitch / 4] == 0xdeadbeefu && rows[r * pitch / 4 + width - 1] == 0xdeadbeefu);
    CHECK(rows[r * pitch / 4 + width] == 0);
  }
  CU_OK(cuMemsetD2D16Async(d, pitch, 0x7777, width, height, nullptr));
  CU_OK(cuMemsetD2D32Async(d + pitch, pitch, 0x12345678u, 2, height - 1, nullptr));
  CU_OK(cuCtxSynchronize());
  CU_OK(cuMemcpyDtoH(rows.data(), d, pitch * height));
  CHECK(rows[0] == 0x77777777u && rows[width / 2 - 1] == 0x77777777u);
  CHECK(rows[pitch / 4] == 0x12345678u && rows[pitch / 4 + 1] == 0x12345678u && rows[pitch / 4 + 2] == 0x77777777u);
  CU_OK(cuMemsetD2D16(d, pitch, 0x0102, 4, 1));
  CU_OK(cuMemcpyDtoH(rows.data(), d, 8));
  CHECK(rows[0] == 0x01020102u && rows[1] == 0x01020102u);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D32(d + 2, pitch, 1, 1, 1));
  CU_OK(cuMemFree(d));
}

static void peers() {
  int can = -1;
  CU_OK(cuDeviceCanAccessPeer(&can, 0, 1));
  CHECK(can == 1);
  int value = -1;
  CU_OK(cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
  CHECK(value == 1);
  CUatomicOperation ops[1] = {CU_ATOMIC_OPERATION_INTEGER_ADD};
  unsigned caps[1] = {99};
  CU_OK(cuDeviceGetP2PAtomicCapabilities(caps, ops, 1, 0, 1));
  CHECK(caps[0] != 99);
  caps[0] = 99;
  CU_OK(cuDeviceGetHostAtomicCapabilities(caps, ops, 1, 0));
  CHECK(caps[0] != 99);

  CUcontext c0, c1;
  CU_OK(cuDevicePrimaryCtxRetain(&c0, 0));
  CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
  CU_OK(cuCtxSetCurrent(c0));
  CU_OK(cuCtxEnablePeerAccess(c1, 0));
  EXPECT_CU(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cuCtxEnablePeerAccess(c1, 0));
  CU_OK(cuCtxDisablePeerAccess(c1));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxEnablePeerAccess(reinterpret_cast<CUcontext>(&can), 0));

  const size_t n = 1000;
  std::vector<unsigned char> data(n), back(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>(i * 3);
  CUdeviceptr d0, d1;
  CU_OK(cuMemAlloc(&d0, n));
  CU_OK(cuCtxSetCurrent(c1));
  CU_OK(cuMemAlloc(&d1, n));
  CU_OK(cuMemcpyHtoD(d0, data.data(), n));
  CU_OK(cuMemcpyPeer(d1, c1, d0, c0, n));
  CU_OK(cuMemcpyDtoH(back.data(), d1, n));
  CHECK(std::memcmp(back.data(), data.data(), n) == 0);
  CU_OK(cuMemsetD8(d0, 0, n));
  CU_OK(cuMemcpyPeerAsync(d0, c0, d1, c1, n, nullptr));
  CU_OK(cuCtxSynchronize());
  CU_OK(cuMemcpyDtoH(back.data(), d0, n));
  CHECK(std::memcmp(back.data(), data.data(), n) == 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyPeer(d1, c0, d0, c0, n));
  CU_OK(cuMemFree(d1));
  CU_OK(cuCtxSetCurrent(c0));
  CU_OK(cuMemFree(d0));
  CU_OK(cuDevicePrimaryCtxRelease(1));
  CU_OK(cuDevicePrimaryCtxRelease(0));
}

// Over tcp mapped memory is device memory at the host address, coherent in
// software: the same checks hold, and the device pointer is the host's.
static void mapped_host_memory(bool shm) {
  void* host = nullptr;
  CU_OK(cuMemHostAlloc(&host, 8192, CU_MEMHOSTALLOC_DEVICEMAP));
  unsigned flags = 0;
  CU_OK(cuMemHostGetFlags(&flags, host));
  CHECK(flags == CU_MEMHOSTALLOC_DEVICEMAP);
  CUdeviceptr mapped = 0;
  CU_OK(cuMemHostGetDevicePointer(&mapped, host, 0));
  if (!shm) CHECK(mapped == reinterpret_cast<CUdeviceptr>(host));
  static_cast<unsigned*>(host)[1] = 7;
  CU_OK(cuMemsetD32(mapped, 0xabcdef01u, 1));
  CU_OK(cuCtxSynchronize());
  CHECK(static_cast<unsigned*>(host)[0] == 0xabcdef01u && static_cast<unsigned*>(host)[1] == 7);
  CU_OK(cuMemsetD32(mapped, 0xabcdef01u, 2048));
  CU_OK(cuCtxSynchronize());
  CHECK(static_cast<unsigned*>(host)[0] == 0xabcdef01u && static_cast<unsigned*>(host)[2047] == 0xabcdef01u);
  // The driver's attributes: host memory, with both pointers.
  CUmemorytype type{};
  CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(host)));
  CHECK(type == CU_MEMORYTYPE_HOST);
  CUdeviceptr device_pointer = 0;
  CU_OK(cuPointerGetAttribute(&device_pointer, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                              reinterpret_cast<CUdeviceptr>(host) + 16));
  CHECK(device_pointer == mapped + 16);
  void* host_pointer = nullptr;
  CU_OK(cuPointerGetAttribute(&host_pointer, CU_POINTER_ATTRIBUTE_HOST_POINTER, reinterpret_cast<CUdeviceptr>(host)));
  CHECK(host_pointer == host);
  CU_OK(cuMemFreeHost(host));
}

static void batch_copies() {
  const size_t n = 512;
  std::vector<unsigned char> src(n, 0x42), back(n, 0);
  CUdeviceptr d;
  CU_OK(cuMemAlloc(&d, n));
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, 0));
  CUmemcpyAttributes attr{};
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
  size_t idx = 0;
  CUdeviceptr dsts[1] = {d};
  CUdeviceptr srcs[1] = {reinterpret_cast<CUdeviceptr>(src.data())};
  size_t sizes[1] = {n};
  CU_OK(cuMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, stream));
  CU_OK(cuStreamSynchronize(stream));
  CU_OK(cuMemcpyDtoH(back.data(), d, n));
  CHECK(back[0] == 0x42 && back[n - 1] == 0x42);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyBatchAsync(dsts, srcs, sizes, 0, &attr, &idx, 1, stream));
  CU_OK(cuStreamDestroy(stream));
  CU_OK(cuMemFree(d));
}

// Over tcp managed memory is coherent in software: the same checks hold.
static void managed() {
  CUdeviceptr m = 0;
  CU_OK(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
  unsigned is_managed = 0;  // four bytes, as NVIDIA's driver writes
  CU_OK(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
  CHECK(is_managed);
  CU_OK(cuMemsetD32(m, 0x11223344u, 1024));
  CU_OK(cuCtxSynchronize());
  CHECK(reinterpret_cast<unsigned*>(m)[1023] == 0x11223344u);
  CUmemLocation dev{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CU_OK(cuMemAdvise(m, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev));
  CU_OK(cuMemPrefetchAsync(m, 4096, dev, 0, nullptr));
  int preferred = -9;
  CU_OK(cuMemRangeGetAttribute(&preferred, sizeof preferred, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 4096));
  CHECK(preferred == 0);
  CU_OK(cuStreamAttachMemAsync(nullptr, m, 0, CU_MEM_ATTACH_HOST));
  CU_OK(cuMemFree(m));
}

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();  // no server: nothing below can work
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
  const char* transport = std::getenv("RGPU_TRANSPORT");
  pools();
  memsets_2d();
  batch_copies();
  peers();
  bool shm = transport && std::strcmp(transport, "shm") == 0;
  mapped_host_memory(shm);
  managed();
  return finish();
}
