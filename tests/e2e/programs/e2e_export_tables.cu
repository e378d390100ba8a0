// NVIDIA's private driver tables (cuGetExportTable) as rgpu answers them:
// each function of each table NVIDIA's runtime and libraries were seen to
// call, against the host-memory test backend.
#include <cstdint>
#include <cstring>

#include "driver_check.h"

namespace {

using Table = const void* const*;

Table table(const unsigned char (&id)[16]) {
  CUuuid u;
  std::memcpy(u.bytes, id, sizeof id);
  const void* t = nullptr;
  CU_OK(cuGetExportTable(&t, &u));
  CHECK(t != nullptr);
  return static_cast<Table>(t);
}

template <typename F>
F slot(Table t, int i) {
  return reinterpret_cast<F>(const_cast<void*>(t[i]));
}

size_t size_word(Table t) { return reinterpret_cast<uintptr_t>(t[0]); }

constexpr unsigned char kCudartInterface[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                                0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
constexpr unsigned char kToolsTls[16] = {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
                                         0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc};
constexpr unsigned char kCallbackHooks[16] = {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
                                              0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66};
constexpr unsigned char kContextStorage[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                               0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};
constexpr unsigned char kCtxCreateBypass[16] = {0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a,
                                                0x89, 0xa7, 0xd0, 0xdf, 0x10, 0xe7, 0x72, 0x86};
constexpr unsigned char kHeapAccess[16] = {0x19, 0x5b, 0xcb, 0xf4, 0xd6, 0x7d, 0x02, 0x4a,
                                           0xac, 0xc5, 0x1d, 0x29, 0xce, 0xa6, 0x31, 0xae};
constexpr unsigned char kIntegrityCheck[16] = {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                                               0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2};
constexpr unsigned char kContextChecks[16] = {0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
                                              0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e};
constexpr unsigned char kToolsContext[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
                                             0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
constexpr unsigned char kToolsModule[16] = {0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
                                            0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e};

constexpr unsigned char kLibrarySupport[16] = {0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45,
                                              0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca};

const char kPtx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 k_param_0\n)\n{\nret;\n}\n";

// What nvcc's host code registers: a wrapper around the image.
struct FatbinWrapper {
  uint32_t magic;
  uint32_t version;
  const void* image;
  const void* prelinked;
};

int g_destroyed = 0;
void* g_destroyed_value = nullptr;
void CUDAAPI on_destroy(CUcontext, void*, void* value) {
  ++g_destroyed;
  g_destroyed_value = value;
}

void cudart_interface(CUcontext primary) {
  Table t = table(kCudartInterface);
  CHECK(size_word(t) == 13 * sizeof(void*));
  FatbinWrapper wrapper{0x466243b1, 1, kPtx, nullptr};
  CUmodule m = nullptr;
  CU_OK(slot<CUresult(CUDAAPI*)(CUmodule*, const void*)>(t, 1)(&m, &wrapper));
  CUfunction f = nullptr, again = nullptr;
  CU_OK(cuModuleGetFunction(&f, m, "k"));
  CU_OK(cuModuleGetFunction(&again, m, "k"));
  CHECK(f && f == again);  // one handle per kernel, as the driver hands out
  CUmodule m6 = nullptr, m8 = nullptr;
  CU_OK(slot<CUresult(CUDAAPI*)(CUmodule*, const void*, void*, void*, unsigned)>(t, 6)(&m6, &wrapper, nullptr,
                                                                                       nullptr, 0));
  CU_OK(slot<CUresult(CUDAAPI*)(const void*, CUmodule*, void*, void*, unsigned)>(t, 8)(kPtx, &m8, nullptr, nullptr,
                                                                                       0));
  CHECK(m6 && m8 && m6 != m8);
  CUcontext ctx = nullptr;
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext*, CUdevice)>(t, 2)(&ctx, 0));
  CHECK(ctx == primary);
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, slot<CUresult(CUDAAPI*)(CUcontext*, CUdevice)>(t, 2)(&ctx, 99));
  slot<void(CUDAAPI*)(uintptr_t)>(t, 7)(0);
  CU_OK(slot<CUresult(CUDAAPI*)()>(t, 12)());
  CHECK(t[10] == nullptr);
  // A slot whose use is unknown fails rather than pretending.
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, slot<CUresult(CUDAAPI*)()>(t, 3)());
}

void tools(CUcontext primary) {
  Table tls = table(kToolsTls);
  CHECK(size_word(tls) == 3 * sizeof(void*));
  CUcontext ctx = nullptr;
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext*)>(tls, 2)(&ctx));
  CHECK(ctx == primary);

  Table hooks = table(kCallbackHooks);
  CHECK(size_word(hooks) == 7 * sizeof(void*));
  void* buffer = nullptr;
  size_t size = 0;
  slot<void(CUDAAPI*)(void**, size_t*)>(hooks, 2)(&buffer, &size);
  CHECK(buffer && size == 1024);
  slot<void(CUDAAPI*)(void**, size_t*)>(hooks, 6)(&buffer, &size);
  CHECK(buffer && size == 14);

  Table context = table(kToolsContext);
  CHECK(size_word(context) == 93 * sizeof(void*));
  unsigned long long id = 0, expected = 0;
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext, unsigned long long*)>(context, 4)(primary, &id));
  CU_OK(cuCtxGetId(primary, &expected));
  CHECK(id == expected);
  void* object = nullptr;
  void* same = nullptr;
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext, uint64_t, void**)>(context, 51)(primary, 0, &object));
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext, uint64_t, void**)>(context, 51)(nullptr, 0, &same));
  CHECK(object && object == same);
  uint64_t value = 0;
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext, void*, uint64_t*, uint64_t)>(context, 39)(primary, object, &value, 6));
  CHECK(value == 7);

  Table module = table(kToolsModule);
  CHECK(size_word(module) == 99 * sizeof(void*));
  CUmodule m = nullptr;
  CU_OK(cuModuleLoadData(&m, kPtx));
  CUfunction visited = nullptr, k = nullptr;
  auto visit = [](void* seen, CUfunction f, uint64_t) { *static_cast<CUfunction*>(seen) = f; };
  using Visitor = void (*)(void*, CUfunction, uint64_t);
  CHECK((slot<uint64_t(CUDAAPI*)(CUcontext, CUmodule, Visitor, void*)>(module, 7)(primary, m, visit, &visited) == 1));
  CU_OK(cuModuleGetFunction(&k, m, "k"));
  CHECK(visited && visited == k);
}

void context_storage(CUcontext primary) {
  Table t = table(kContextStorage);
  auto put = slot<CUresult(CUDAAPI*)(CUcontext, void*, void*, void(CUDAAPI*)(CUcontext, void*, void*))>(t, 0);
  auto remove = slot<CUresult(CUDAAPI*)(CUcontext, void*)>(t, 1);
  auto get = slot<CUresult(CUDAAPI*)(void**, CUcontext, void*)>(t, 2);
  int key_a = 0, key_b = 0, value_a = 0, value_b = 0;
  void* v = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, get(&v, primary, &key_a));
  CU_OK(put(primary, &key_a, &value_a, on_destroy));
  CU_OK(put(nullptr, &key_b, &value_b, nullptr));  // NULL: the current context
  CU_OK(get(&v, nullptr, &key_a));
  CHECK(v == &value_a);
  CU_OK(get(&v, primary, &key_b));
  CHECK(v == &value_b);
  CU_OK(remove(primary, &key_b));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, get(&v, primary, &key_b));
  CHECK(g_destroyed == 0);
  // Resetting the context runs the destructors of what it still stores.
  CU_OK(cuDevicePrimaryCtxReset(0));
  CHECK(g_destroyed == 1 && g_destroyed_value == &value_a);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, get(&v, primary, &key_a));
}

void checks_and_bypass(CUcontext primary) {
  Table bypass = table(kCtxCreateBypass);
  CUcontext ctx = nullptr;
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext*, unsigned, CUdevice)>(bypass, 1)(&ctx, 0, 0));
  CHECK(ctx == primary);
  CU_OK(cuCtxDestroy(ctx));

  Table checks = table(kContextChecks);
  CHECK(size_word(checks) == 15 * sizeof(void*));
  uint32_t flags = 1;
  const void* extra = &flags;
  CU_OK(slot<CUresult(CUDAAPI*)(CUcontext, uint32_t*, const void**)>(checks, 2)(primary, &flags, &extra));
  CHECK(flags == 0 && extra == nullptr);
  CHECK(slot<uint32_t(CUDAAPI*)()>(checks, 3)() == 0);

  Table integrity = table(kIntegrityCheck);
  auto check = slot<CUresult(CUDAAPI*)(uint32_t, uint64_t, uint64_t*)>(integrity, 1);
  uint64_t a[2] = {}, b[2] = {}, c[2] = {};
  CU_OK(check(13000, 1800000000, a));
  CHECK(a[0] == 0x3341181C03CB675CULL && a[1] == 0x8ED383AA1F4CD1E8ULL);
  CU_OK(check(13002, 1800000000, a));
  CU_OK(check(13002, 1800000000, b));
  CU_OK(check(13002, 1800000001, c));
  CHECK(a[0] == b[0] && a[1] == b[1] && (a[0] != c[0] || a[1] != c[1]));

  Table heap = table(kHeapAccess);
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, slot<CUresult(CUDAAPI*)()>(heap, 1)());
  // Refused, with its two outputs left null.
  Table library = table(kLibrarySupport);
  void* first = &flags;
  void* second = &flags;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, slot<CUresult(CUDAAPI*)(void**, void**)>(library, 4)(&first, &second));
  CHECK(first == nullptr && second == nullptr);
}

}  // namespace

int main() {
  CU_OK(cuInit(0));
  CUuuid unknown{};
  const void* t = &unknown;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&t, &unknown));
  CHECK(t == nullptr);
  CUcontext primary = nullptr;
  CU_OK(cuDevicePrimaryCtxRetain(&primary, 0));
  CU_OK(cuCtxSetCurrent(primary));
  cudart_interface(primary);
  tools(primary);
  checks_and_bypass(primary);
  context_storage(primary);
  return finish();
}
