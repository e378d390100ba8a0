// Modules the application loads itself: the whole image (fat binary, cubin
// or PTX, which the server's driver JIT-compiles) goes to the current
// device's server, and kernels are looked up there by name with their
// parameter layout. cuModuleUnload forgets the handles; the server frees the
// module with the session.
#include "client/cuda/cuda_api.hpp"

#include <elf.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <iterator>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/given_variables.hpp"
#include "client/core/memory_map.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/cuda/module_loading.hpp"
#include "client/cudart/managed_memory.hpp"
#include "common/log.hpp"
#include "fatbin/fatbin_container.hpp"
#include "fatbin/fatbin_hash.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// Byte by byte, so that a short PTX string is not read past its end.
bool starts_with(const void* image, const void* prefix, size_t n) {
  const auto* a = static_cast<const unsigned char*>(image);
  const auto* b = static_cast<const unsigned char*>(prefix);
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// The image's length, which cuModuleLoadData is not told: from the fat
// binary header, the ELF header's tables, or the PTX text's terminator.
size_t image_size(const void* image) {
  const uint32_t magic = fatbin::kFatbinMagic;
  if (starts_with(image, &magic, sizeof magic)) return fatbin::fatbin_total_size(image);
  if (starts_with(image, ELFMAG, SELFMAG)) {
    Elf64_Ehdr h;
    std::memcpy(&h, image, sizeof h);
    return std::max<size_t>(h.e_shoff + size_t{h.e_shnum} * h.e_shentsize,
                            h.e_phoff + size_t{h.e_phnum} * h.e_phentsize);
  }
  return std::strlen(static_cast<const char*>(image)) + 1;
}

}  // namespace

namespace rgpu::client {

namespace {

// Loads the image on `device`: its server handle. First by content hash
// alone (the server may have it cached), then with the image if it asks:
// NVIDIA's libraries hand over hundreds of megabytes of fat binaries.
cudaError_t load_on(int device, const void* image, size_t size, uint64_t* remote) {
  const std::string hash = fatbin::fatbin_hash({static_cast<const std::byte*>(image), size});
  for (uint8_t with_image = 0; with_image < 2; ++with_image) {
    Call call(proto::kOpModuleLoadImage);
    int32_t ordinal;
    if (cudaError_t e = call.to_device(device, &ordinal)) return e;
    call.args().put_string(hash).put(with_image);
    iovec payload{const_cast<void*>(image), size};
    if (cudaError_t e = call.run(with_image ? std::span<const iovec>(&payload, 1) : std::span<const iovec>()))
      return e;
    if (call.reply().get<uint8_t>() != 0) continue;  // the server needs the image
    *remote = call.reply().get<uint64_t>();
    return cudaSuccess;
  }
  return cudaErrorInvalidKernelImage;
}

cudaError_t load(CUmodule* module, const void* image, bool library) {
  image = fatbin_image(image);
  size_t size;
  try {
    size = image_size(image);
  } catch (const fatbin::FormatError&) {
    return cudaErrorInvalidKernelImage;
  }
  auto m = std::make_unique<DriverModule>();
  m->device = Runtime::current_device();
  if (cudaError_t e = load_on(m->device, image, size, &m->remote)) return e;
  const auto* bytes = static_cast<const uint8_t*>(image);
  m->image = std::make_shared<const std::vector<uint8_t>>(bytes, bytes + size);
  m->library = library;
  *module = DriverHandles::get().add(std::move(m));
  return cudaSuccess;
}

// Loading a library on another device: one at a time (they are rare).
std::mutex g_elsewhere_mutex;

// The server handle of the module on `device`, a library loaded there first.
cudaError_t module_on(DriverModule* m, int device, uint64_t* remote) {
  if (device == m->device) {
    if (m->remote == 0)  // a library's device was reset, or the session moved
      if (cudaError_t e = load_on(device, m->image->data(), m->image->size(), &m->remote)) return e;
    *remote = m->remote;
    return cudaSuccess;
  }
  if (!m->library) return cudaErrorDeviceUninitialized;
  if (auto it = m->elsewhere.find(device); it != m->elsewhere.end()) {
    *remote = it->second;
    return cudaSuccess;
  }
  if (cudaError_t e = load_on(device, m->image->data(), m->image->size(), remote)) return e;
  m->elsewhere[device] = *remote;
  return cudaSuccess;
}

// A kernel as the server described it (put_function): handle, dynamic
// shared memory limit and parameter layout.
LoadedKernel read_kernel(proto::Reader& r) {
  LoadedKernel k;
  k.function = r.get<uint64_t>();
  k.max_dynamic_shared = r.get<int32_t>();
  uint32_t n = r.get<uint32_t>();
  for (uint32_t i = 0; i < n; ++i) {
    KernelParamLayout p{r.get<uint32_t>(), r.get<uint32_t>()};
    k.args_size = std::max(k.args_size, p.offset + p.size);
    k.params.push_back(p);
  }
  return k;
}

// The module's handle for the kernel the reply describes: the one handed
// out before, if any (DriverHandles::add keeps one per name).
CUfunction add_function(DriverModule* m, std::string name, proto::Reader& r) {
  auto f = std::make_unique<DriverFunction>();
  f->module = m;
  f->name = std::move(name);
  f->kernel = read_kernel(r);
  return DriverHandles::get().add(std::move(f));
}

}  // namespace

cudaError_t load_module(CUmodule* module, const void* image) { return load(module, image, false); }

cudaError_t load_library(CUmodule* library, const void* image) { return load(library, image, true); }

namespace {

// The function as the server has it on `device`, its module loaded there first.
cudaError_t look_up(DriverFunction* f, int device, LoadedKernel* out) {
  uint64_t module;
  if (cudaError_t e = module_on(f->module, device, &module)) return e;
  Call call(proto::kOpModuleGetFunction);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(device, &ordinal)) return e;
  call.args().put<uint64_t>(module).put_string(f->name);
  if (cudaError_t e = call.quiet().run()) return e;
  *out = read_kernel(call.reply());
  return cudaSuccess;
}

}  // namespace

cudaError_t function_on(DriverFunction* f, int device, LoadedKernel** out) {
  // Every launch comes here: the home device's kernel needs no lock unless
  // a reset of its device left it to look up again.
  if (device == f->module->device) {
    if (f->kernel.function == 0) {  // a library's device was reset, or the session moved
      std::lock_guard lock(g_elsewhere_mutex);
      if (f->kernel.function == 0)
        if (cudaError_t e = look_up(f, device, &f->kernel)) return e;
    }
    *out = &f->kernel;
    return cudaSuccess;
  }
  std::lock_guard lock(g_elsewhere_mutex);
  if (auto it = f->elsewhere.find(device); it != f->elsewhere.end()) {
    *out = &it->second;
    return cudaSuccess;
  }
  LoadedKernel k;
  if (cudaError_t e = look_up(f, device, &k)) return e;
  *out = &(f->elsewhere[device] = std::move(k));
  return cudaSuccess;
}

bool read_image_file(const char* path, std::vector<char>* image) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  image->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  image->push_back('\0');
  return true;
}

cudaError_t get_function(CUfunction* out, DriverModule* m, const char* name) {
  if (CUfunction known = DriverHandles::get().find_function(m, name)) {
    *out = known;
    return cudaSuccess;
  }
  uint64_t module;
  if (cudaError_t e = module_on(m, m->device, &module)) return e;
  Call call(proto::kOpModuleGetFunction);
  int32_t remote;
  if (cudaError_t e = call.to_device(m->device, &remote)) return e;
  call.args().put<uint64_t>(module).put_string(name);
  if (cudaError_t e = call.quiet().run()) return e;
  *out = add_function(m, name, call.reply());
  return cudaSuccess;
}

cudaError_t enumerate_functions(DriverModule* m, std::vector<CUfunction>* out) {
  uint64_t module;
  if (cudaError_t e = module_on(m, m->device, &module)) return e;
  Call call(proto::kOpModuleEnumerateFunctions);
  int32_t remote;
  if (cudaError_t e = call.to_device(m->device, &remote)) return e;
  call.args().put<uint64_t>(module);
  if (cudaError_t e = call.quiet().run()) return e;
  auto& r = call.reply();
  out->resize(r.get<uint32_t>());
  for (CUfunction& f : *out) {
    std::string name = r.get_string();
    f = add_function(m, std::move(name), r);
  }
  return cudaSuccess;
}

namespace {

// Asks the server holding `m` on `device` for its variable `name`; the
// reply holds its address and size.
cudaError_t look_up_variable(Call& call, DriverModule* m, const char* name, int device) {
  uint64_t module;
  {
    std::lock_guard lock(g_elsewhere_mutex);
    if (cudaError_t e = module_on(m, device, &module)) return e;
  }
  int32_t ordinal;
  if (cudaError_t e = call.to_device(device, &ordinal)) return e;
  call.args().put<uint64_t>(module).put_string(name);
  return call.quiet().run();
}

}  // namespace

namespace {

// The variable `op` finds (address, size, managed): known to the memory
// map, and when the driver made it managed memory, reachable by the host at
// its address as locally.
cudaError_t variable(uint16_t op, CUdeviceptr* dptr, size_t* bytes, DriverModule* m, const char* name, int device) {
  Call call(op);
  if (cudaError_t e = look_up_variable(call, m, name, device)) return e;
  uint64_t ptr = call.reply().get<uint64_t>();
  uint64_t size = call.reply().get<uint64_t>();
  bool managed = call.reply().get<uint8_t>();
  // Copies check pointers against the memory map; an address another
  // server's memory already has would be ambiguous.
  if (!MemoryMap::get().find_device(ptr) && !MemoryMap::get().add_device(ptr, size, device))
    return cudaErrorInvalidSymbol;
  if (managed) {
    if (cudaError_t e = add_managed_variable(ptr, size, device)) return e;
    DriverHandles::get().add_managed_variable(m, ptr, device);
  }
  if (dptr) *dptr = ptr;
  if (bytes) *bytes = size;
  return cudaSuccess;
}

}  // namespace

cudaError_t get_global(CUdeviceptr* dptr, size_t* bytes, DriverModule* m, const char* name, int device) {
  return variable(proto::kOpModuleGetGlobal, dptr, bytes, m, name, device);
}

cudaError_t hand_out_global(CUdeviceptr* dptr, size_t* bytes, DriverModule* m, const char* name, int device) {
  size_t size = 0;
  if (cudaError_t e = get_global(dptr, &size, m, name, device)) return e;
  if (bytes) *bytes = size;
  if (dptr)
    GivenVariables::get().add({device, *dptr, size, m, [m, variable = std::string(name), device](uint64_t* at) {
                                 CUdeviceptr p = 0;
                                 cudaError_t e = get_global(&p, nullptr, m, variable.c_str(), device);
                                 *at = p;
                                 return e;
                               }});
  return cudaSuccess;
}

cudaError_t get_managed(CUdeviceptr* dptr, size_t* bytes, DriverModule* m, const char* name, int device) {
  return variable(proto::kOpModuleGetManaged, dptr, bytes, m, name, device);
}

cudaError_t get_unified_function(DriverModule* m, const char* symbol) {
  if (!m) return cudaErrorInvalidResourceHandle;
  RGPU_LOG(warn, "unified function %s: the application's process cannot call functions in a remote GPU's memory "
                 "(no device has unified function pointers here)",
           symbol);
  return cudaErrorSymbolNotFound;
}

}  // namespace rgpu::client

extern "C" CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  KeepLastError keep;
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(api([&] { return load_module(module, image); }));
}

// JIT options only tune or report on compilation, which the server does.
extern "C" CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                               CUjit_option* options, void** optionValues) {
  if (numOptions && (!options || !optionValues)) return CUDA_ERROR_INVALID_VALUE;
  return cuModuleLoadData(module, image);
}

extern "C" CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return cuModuleLoadData(module, fatCubin);
}

extern "C" CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* fname) {
  if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
  std::vector<char> image;
  if (!read_image_file(fname, &image)) return CUDA_ERROR_FILE_NOT_FOUND;
  return cuModuleLoadData(module, image.data());
}

extern "C" CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return DriverHandles::get().remove(hmod) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

extern "C" CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  KeepLastError keep;
  if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverModule* m = DriverHandles::get().find(hmod);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  cudaError_t e = api([&] { return get_function(hfunc, m, name); });
  // The driver reports an unknown kernel name as not found.
  return e == cudaErrorInvalidDeviceFunction || e == cudaErrorSymbolNotFound ? CUDA_ERROR_NOT_FOUND : to_cu(e);
}

extern "C" CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  KeepLastError keep;
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverModule* m = DriverHandles::get().find(mod);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  std::vector<CUfunction> functions;
  if (CUresult e = to_cu(api([&] { return enumerate_functions(m, &functions); }))) return e;
  *count = functions.size();
  return CUDA_SUCCESS;
}

// As the driver: numFunctions may be fewer than the module has.
extern "C" CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions,
                                                       CUmodule mod) {
  KeepLastError keep;
  if (!functions && numFunctions) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverModule* m = DriverHandles::get().find(mod);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  std::vector<CUfunction> all;
  if (CUresult e = to_cu(api([&] { return enumerate_functions(m, &all); }))) return e;
  std::copy_n(all.begin(), std::min<size_t>(numFunctions, all.size()), functions);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name) {
  KeepLastError keep;
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverModule* m = DriverHandles::get().find(hmod);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  cudaError_t e = api([&] { return hand_out_global(dptr, bytes, m, name, m->device); });
  return e == cudaErrorInvalidSymbol ? CUDA_ERROR_NOT_FOUND : to_cu(e);
}
