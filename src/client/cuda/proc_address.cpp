// cuGetProcAddress: this library's own entry points by API name, resolved
// the way cuda.h binds them (cuMemAlloc -> cuMemAlloc_v2; with the per-thread
// flag, cuLaunchKernel -> cuLaunchKernel_ptsz). The newest binding is given
// whatever cudaVersion asks for, as rgpu implements only that one.
#include "client/cuda/cuda_api.hpp"
#include <dlfcn.h>

#include <cstring>
#include <string>

#include "client/cuda/driver_errors.hpp"
#include "client/cuda/proc_names.hpp"

using namespace rgpu::client;

namespace {

std::string symbol_for(const char* api, cuuint64_t flags) {
  for (size_t i = 0; i < kProcNameCount; ++i) {
    const ProcName& p = kProcNames[i];
    if (std::strcmp(p.api, api) != 0) continue;
    std::string s = p.symbol;
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && *p.per_thread) s += std::string("_") + p.per_thread;
    return s;
  }
  return api;
}

// This library, found from one of its own symbols.
void* self() {
  static void* handle = [] {
    Dl_info info{};
    void* h = nullptr;
    if (dladdr(reinterpret_cast<void*>(&cuGetProcAddress_v2), &info) && info.dli_fname)
      h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    return h;
  }();
  return handle;
}

}  // namespace

extern "C" CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult* symbolStatus) {
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  // Only driver entry points: this library also holds the runtime's.
  void* f = std::strncmp(symbol, "cu", 2) == 0 && std::strncmp(symbol, "cuda", 4) != 0 && self()
                ? dlsym(self(), symbol_for(symbol, flags).c_str())
                : nullptr;
  if (symbolStatus) *symbolStatus = f ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (!f) return CUDA_ERROR_NOT_FOUND;
  *pfn = f;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}
