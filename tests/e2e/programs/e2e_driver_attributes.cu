// Driver API attributes: cuPointerGetAttributes over device, host and
// unknown memory; cuPointerSetAttribute (SYNC_MEMOPS) on the session's
// memory only; coredump settings, global and per context, round trips and
// errors; cuDeviceGetLuid and cuProfilerInitialize forwarded.
#include <cstring>
#include <string>

#include <cudaProfiler.h>

#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  // ---- cuPointerGetAttributes
  CUdeviceptr d = 0;
  CU_OK(cuMemAlloc(&d, 4096));
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                 CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_CONTEXT};
  CUmemorytype type;
  int ordinal;
  CUdeviceptr start;
  size_t range;
  void* host;
  unsigned managed;  // NVIDIA's driver writes four bytes (its runtime reads four)
  CUcontext owner;
  auto fill = [&] {
    std::memset(&type, 0xff, sizeof type);
    std::memset(&ordinal, 0xff, sizeof ordinal);
    std::memset(&start, 0xff, sizeof start);
    std::memset(&range, 0xff, sizeof range);
    std::memset(&host, 0xff, sizeof host);
    std::memset(&managed, 0xff, sizeof managed);
    std::memset(&owner, 0xff, sizeof owner);
  };
  void* data[] = {&type, &ordinal, &start, &range, &host, &managed, &owner};
  fill();
  CU_OK(cuPointerGetAttributes(7, attrs, data, d + 100));
  CHECK(type == CU_MEMORYTYPE_DEVICE && ordinal == 0 && start == d && range == 4096);
  CHECK(host == nullptr);  // device memory has no host pointer: its NULL value, no error
  CHECK(!managed && owner == ctx);
  // Page-locked host memory.
  void* pinned = nullptr;
  CU_OK(cuMemAllocHost(&pinned, 256));
  fill();
  CU_OK(cuPointerGetAttributes(7, attrs, data, reinterpret_cast<CUdeviceptr>(pinned) + 8));
  CHECK(type == CU_MEMORYTYPE_HOST && host == static_cast<char*>(pinned) + 8);
  CHECK(start == reinterpret_cast<CUdeviceptr>(pinned) && range == 256);
  // Memory CUDA never saw: every attribute NULL (the ordinal CU_DEVICE_INVALID,
  // as NVIDIA's driver answers) but the host pointer, which is the address
  // itself (NVIDIA's runtime reports it so), and success.
  static int word;
  fill();
  CU_OK(cuPointerGetAttributes(7, attrs, data, reinterpret_cast<CUdeviceptr>(&word)));
  CHECK(type == 0 && ordinal == CU_DEVICE_INVALID && start == 0 && range == 0 && host == &word && !managed &&
        owner == nullptr);
  CU_OK(cuPointerGetAttributes(0, nullptr, nullptr, d));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttributes(2, attrs, nullptr, d));
  CUpointer_attribute bogus[] = {static_cast<CUpointer_attribute>(99)};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttributes(1, bogus, data, d));
  void* null_slot[] = {nullptr};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttributes(1, attrs, null_slot, d));
  // Buffer ids tell allocations apart (cuFFT relies on it).
  CUpointer_attribute buffer_id[] = {CU_POINTER_ATTRIBUTE_BUFFER_ID};
  unsigned long long id = 0, other_id = 0;
  void* id_slot[] = {&id};
  void* other_slot[] = {&other_id};
  CU_OK(cuPointerGetAttributes(1, buffer_id, id_slot, d));
  CUdeviceptr other = 0;
  CU_OK(cuMemAlloc(&other, 64));
  CU_OK(cuPointerGetAttributes(1, buffer_id, other_slot, other));
  CHECK(id != 0 && other_id != 0 && id != other_id);
  CU_OK(cuMemFree(other));
  // An attribute rgpu cannot answer fails rather than pass for NULL.
  CUpointer_attribute handle_types[] = {CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES};
  void* types_slot[] = {&other_id};
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuPointerGetAttributes(1, handle_types, types_slot, d));

  // ---- cuPointerSetAttribute
  unsigned one = 1;
  CU_OK(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  CU_OK(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d + 4000));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_CONTEXT, d));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuPointerSetAttribute(nullptr, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, reinterpret_cast<CUdeviceptr>(&word)));
  CU_OK(cuMemFree(d));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  CU_OK(cuMemFreeHost(pinned));

  // ---- coredump settings
  size_t size = 0;
  CU_OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, &size));
  CHECK(size == sizeof(bool));
  bool on = true;
  size = sizeof on;
  CU_OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size));
  CHECK(!on);  // off unless asked for
  on = true;
  CU_OK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size));
  on = false;
  CU_OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size));
  CHECK(on);
  on = false;
  CU_OK(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size));
  CHECK(on);  // the context follows the global setting it did not override
  int flags = CU_COREDUMP_SKIP_ABORT | CU_COREDUMP_SKIP_LOCAL_MEMORY;
  size = sizeof flags;
  CU_OK(cuCoredumpSetAttribute(CU_COREDUMP_GENERATION_FLAGS, &flags, &size));
  flags = -1;
  CU_OK(cuCoredumpGetAttribute(CU_COREDUMP_GENERATION_FLAGS, &flags, &size));
  CHECK(flags == (CU_COREDUMP_SKIP_ABORT | CU_COREDUMP_SKIP_LOCAL_MEMORY));
  CU_OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, &flags, &size));
  CHECK(flags == CU_COREDUMP_DEFAULT_FLAGS);  // set on the context only
  char path[] = "/tmp/rgpu-e2e-core";
  size = sizeof path;
  CU_OK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, path, &size));
  char got[1024] = {};
  size = sizeof got;
  CU_OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, got, &size));
  CHECK(std::string(got) == path);
  size = 4;  // too small for the path
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, got, &size));
  size = sizeof path;
  EXPECT_CU(CUDA_ERROR_NOT_PERMITTED, cuCoredumpSetAttribute(CU_COREDUMP_PIPE, path, &size));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, got, nullptr));
  size = 1 << 20;  // more than rgpu carries
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, path, &size));
  size = sizeof on;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCoredumpSetAttributeGlobal(CU_COREDUMP_MAX, &on, &size));

  // ---- forwarded as they are
  char luid[8];
  unsigned mask = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetLuid(luid, &mask, 7));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetLuid(nullptr, &mask, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetLuid(luid, nullptr, 0));
  // CUDA 12 and later answer CUDA_ERROR_NOT_SUPPORTED, as the test backend does.
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuProfilerInitialize("config", "out", CU_OUT_CSV));
  return finish();
}
