#include "client/core/module_registry.hpp"

#include <fatbinary_section.h>

#include <algorithm>

#include "client/core/call.hpp"
#include "client/core/function_attribute_cache.hpp"
#include "client/core/given_variables.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/runtime.hpp"
#include "common/log.hpp"
#include "fatbin/fatbin_container.hpp"
#include "fatbin/fatbin_hash.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {

ModuleRegistry& ModuleRegistry::get() {
  static auto* r = new ModuleRegistry;
  return *r;
}

const void* fatbin_image(const void* image) {
  const uint32_t magic = FATBINC_MAGIC;
  const auto* a = static_cast<const unsigned char*>(image);
  const auto* b = reinterpret_cast<const unsigned char*>(&magic);
  for (size_t i = 0; i < sizeof magic; ++i)
    if (a[i] != b[i]) return image;
  return static_cast<const __fatBinC_Wrapper_t*>(image)->data;
}

void** ModuleRegistry::add_fatbin(const void* wrapper) {
  auto fb = std::make_unique<FatBinary>();
  // nvcc passes the wrapper; a bare fat binary is accepted too.
  fb->image = fatbin_image(wrapper);
  fb->size = fatbin::fatbin_total_size(fb->image);
  std::lock_guard lock(mutex_);
  fatbins_.push_back(std::move(fb));
  return reinterpret_cast<void**>(fatbins_.back().get());
}

void ModuleRegistry::add_function(void** handle, const void* host_function, const char* name) {
  std::lock_guard lock(mutex_);
  auto* fb = reinterpret_cast<FatBinary*>(handle);
  kernel_store_.push_back(std::make_unique<KernelEntry>(KernelEntry{fb, host_function, name, {}}));
  KernelEntry* k = kernel_store_.back().get();
  fb->kernels.push_back(k);
  kernels_[host_function] = k;
  kernels_[k] = k;
}

void ModuleRegistry::add_var(void** handle, const void* host_var, const char* name, size_t size) {
  std::lock_guard lock(mutex_);
  auto* fb = reinterpret_cast<FatBinary*>(handle);
  var_store_.push_back(std::make_unique<VarEntry>(VarEntry{fb, host_var, name, size, {}}));
  VarEntry* v = var_store_.back().get();
  fb->vars.push_back(v);
  vars_[host_var] = v;
}

void ModuleRegistry::add_managed_var(void** handle, void** host_pointer, const char* name, size_t size,
                                     const ManagedVariableHooks& hooks) {
  std::lock_guard lock(mutex_);
  add_var(handle, host_pointer, name, size);
  var_store_.back()->managed_pointer = host_pointer;
  managed_hooks_ = hooks;
}

cudaError_t ModuleRegistry::init_module(void** handle) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  std::lock_guard lock(mutex_);
  return load(reinterpret_cast<FatBinary*>(handle), Runtime::current_device());
}

void ModuleRegistry::take_managed(VarEntry* v, int device, LoadedVar* lv) {
  if (!managed_hooks_.add || managed_hooks_.add(lv->address, lv->size, device) != cudaSuccess) {
    lv->address = 0;  // unusable rather than unreachable by the host
    return;
  }
  vars_[reinterpret_cast<const void*>(lv->address)] = v;
  if (v->managed_pointer && !*v->managed_pointer) *v->managed_pointer = reinterpret_cast<void*>(lv->address);
}

void ModuleRegistry::remove_fatbin(void** handle) {
  std::lock_guard lock(mutex_);
  auto* fb = reinterpret_cast<FatBinary*>(handle);
  for (KernelEntry* k : fb->kernels) {
    kernels_.erase(k->host_function);
    kernels_.erase(k);
    for (const auto& [device, loaded] : k->loaded) FunctionAttributeCache::get().forget_function(device, loaded.function);
  }
  for (VarEntry* v : fb->vars) {
    vars_.erase(v->host_var);
    std::erase_if(moved_contents_, [&](const auto& c) { return c.first.second == v; });
    GivenVariables::get().forget(v);
    for (const auto& [device, loaded] : v->loaded) vars_.erase(reinterpret_cast<const void*>(loaded.address));
  }
}

KernelEntry* ModuleRegistry::find_kernel(const void* func) {
  std::lock_guard lock(mutex_);
  auto it = kernels_.find(func);
  return it == kernels_.end() ? nullptr : it->second;
}

VarEntry* ModuleRegistry::find_var(const void* symbol) {
  std::lock_guard lock(mutex_);
  auto it = vars_.find(symbol);
  return it == vars_.end() ? nullptr : it->second;
}

KernelEntry* ModuleRegistry::find_loaded(int device, uint64_t function) {
  std::lock_guard lock(mutex_);
  for (const auto& k : kernel_store_)
    if (auto it = k->loaded.find(device); it != k->loaded.end() && it->second.function == function) return k.get();
  return nullptr;
}

cudaError_t ModuleRegistry::kernel_on(KernelEntry* k, int device, const LoadedKernel** out) {
  std::lock_guard lock(mutex_);
  if (cudaError_t e = load(k->fatbin, device)) return e;
  const LoadedKernel& lk = k->loaded[device];
  if (lk.function == 0) return cudaErrorInvalidDeviceFunction;
  *out = &lk;
  return cudaSuccess;
}

cudaError_t ModuleRegistry::var_on(VarEntry* v, int device, const LoadedVar** out) {
  std::lock_guard lock(mutex_);
  if (cudaError_t e = load(v->fatbin, device)) return e;
  const LoadedVar& lv = v->loaded[device];
  if (lv.address == 0) return cudaErrorInvalidSymbol;
  *out = &lv;
  return cudaSuccess;
}

void ModuleRegistry::set_max_dynamic_shared(KernelEntry* k, int device, int32_t bytes) {
  std::lock_guard lock(mutex_);
  if (auto it = k->loaded.find(device); it != k->loaded.end()) it->second.max_dynamic_shared = bytes;
}

void ModuleRegistry::forget_device(int device) {
  std::lock_guard lock(mutex_);
  forget_loaded(device);
  std::erase_if(moved_contents_, [&](const auto& c) { return c.first.first == device; });
}

void ModuleRegistry::moved_device(int device, std::vector<std::pair<VarEntry*, std::vector<uint8_t>>> contents) {
  std::lock_guard lock(mutex_);
  forget_loaded(device);
  for (auto& [var, bytes] : contents) moved_contents_[{device, var}] = std::move(bytes);
}

void ModuleRegistry::restore_moved(FatBinary* fb, int device) {
  for (VarEntry* v : fb->vars) {
    auto c = moved_contents_.find({device, v});
    if (c == moved_contents_.end()) continue;
    const LoadedVar& lv = v->loaded[device];
    cudaError_t e = lv.address ? cudaSuccess : cudaErrorInvalidSymbol;
    if (!e && !c->second.empty()) {
      Call call(proto::kOpMemcpyHtoD);
      int32_t remote;
      e = call.to_device(device, &remote);
      call.args()
          .put<uint64_t>(lv.address)
          .put<uint64_t>(reinterpret_cast<uint64_t>(cudaStreamPerThread))
          .put<uint8_t>(1);
      iovec data{c->second.data(), std::min(c->second.size(), lv.size)};
      if (!e) e = call.run({&data, 1});
    }
    if (e) RGPU_LOG(error, "moved session: the module variable %s lost its contents (%s)", v->name.c_str(),
                    cudaGetErrorName(e));
    moved_contents_.erase(c);
  }
}

std::vector<ModuleRegistry::LoadedImage> ModuleRegistry::loaded_images(int device) {
  std::lock_guard lock(mutex_);
  std::vector<LoadedImage> out;
  for (const auto& fb : fatbins_) {
    if (auto it = fb->load_status.find(device); it == fb->load_status.end() || it->second != cudaSuccess) continue;
    LoadedImage& loaded = out.emplace_back(LoadedImage{fb->image, fb->size, {}});
    for (const KernelEntry* k : fb->kernels) loaded.kernels.push_back(k->name);
  }
  return out;
}

void ModuleRegistry::forget_loaded(int device) {
  for (auto& fb : fatbins_) fb->load_status.erase(device);
  for (auto& k : kernel_store_) k->loaded.erase(device);
  for (auto& v : var_store_) {
    auto it = v->loaded.find(device);
    if (it == v->loaded.end()) continue;
    if (v->managed_pointer && it->second.address) {
      vars_.erase(reinterpret_cast<const void*>(it->second.address));
      managed_hooks_.remove(it->second.address);
      // Its next load on a device points the host there.
      if (*v->managed_pointer == reinterpret_cast<void*>(it->second.address)) *v->managed_pointer = nullptr;
    }
    v->loaded.erase(it);
  }
}

std::vector<std::pair<VarEntry*, LoadedVar>> ModuleRegistry::loaded_vars(int device) {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<VarEntry*, LoadedVar>> out;
  for (auto& v : var_store_)
    if (auto it = v->loaded.find(device); it != v->loaded.end() && it->second.address) out.emplace_back(v.get(), it->second);
  return out;
}

// ModuleLoad: first without the image (the server may have it cached by
// hash), then with it if the server asks.
cudaError_t ModuleRegistry::load(FatBinary* fb, int device) {
  if (auto it = fb->load_status.find(device); it != fb->load_status.end()) return it->second;
  const std::string hash =
      fatbin::fatbin_hash({static_cast<const std::byte*>(fb->image), fb->size});
  cudaError_t status = cudaErrorUnknown;
  for (uint8_t with_image = 0; with_image < 2; ++with_image) {
    Call call(proto::kOpModuleLoad);
    int32_t remote;
    if (cudaError_t e = call.to_device(device, &remote)) return e;
    auto& a = call.args();
    a.put_string(hash).put(with_image).put<uint32_t>(fb->kernels.size());
    for (KernelEntry* k : fb->kernels) a.put_string(k->name);
    a.put<uint32_t>(fb->vars.size());
    for (VarEntry* v : fb->vars) a.put_string(v->name).put<uint64_t>(v->size);
    iovec image{const_cast<void*>(fb->image), fb->size};
    status = call.run(with_image ? std::span<const iovec>(&image, 1) : std::span<const iovec>());
    if (status != cudaSuccess) break;
    auto& r = call.reply();
    if (r.get<uint8_t>() != 0) continue;  // the server needs the image
    for (KernelEntry* k : fb->kernels) {
      LoadedKernel lk;
      lk.function = r.get<uint64_t>();
      lk.max_dynamic_shared = r.get<int32_t>();
      uint32_t n = r.get<uint32_t>();
      for (uint32_t i = 0; i < n; ++i) {
        KernelParamLayout p{r.get<uint32_t>(), r.get<uint32_t>()};
        lk.args_size = std::max(lk.args_size, p.offset + p.size);
        lk.params.push_back(p);
      }
      k->loaded[device] = std::move(lk);
    }
    for (VarEntry* v : fb->vars) {
      LoadedVar lv{r.get<uint64_t>(), r.get<uint64_t>()};
      bool managed = r.get<uint8_t>();
      // A variable whose address another server's memory already has is
      // left unusable (cudaErrorInvalidSymbol) rather than ambiguous.
      if (lv.address && !MemoryMap::get().add_device(lv.address, lv.size, device)) lv.address = 0;
      if (lv.address && managed) take_managed(v, device, &lv);
      v->loaded[device] = lv;
    }
    break;
  }
  fb->load_status[device] = status;
  if (status == cudaSuccess) restore_moved(fb, device);
  return status;
}

}  // namespace rgpu::client
