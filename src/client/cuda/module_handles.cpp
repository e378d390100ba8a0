#include "client/cuda/module_handles.hpp"

#include "client/core/function_attribute_cache.hpp"
#include "client/core/given_variables.hpp"
#include "client/cudart/managed_memory.hpp"

namespace rgpu::client {
namespace {

// The function's module is unloaded: what was kept of its answers goes.
void forget_answers(const DriverFunction& f) {
  auto& cache = FunctionAttributeCache::get();
  if (f.kernel.function) cache.forget_function(f.module->device, f.kernel.function);
  for (const auto& [device, loaded] : f.elsewhere) cache.forget_function(device, loaded.function);
}

}  // namespace

DriverHandles& DriverHandles::get() {
  // Never destroyed: NVIDIA's libraries unload their modules from exit
  // handlers that may run after this library's destructors.
  static auto* handles = new DriverHandles;
  return *handles;
}

CUmodule DriverHandles::add(std::unique_ptr<DriverModule> m) {
  std::lock_guard lock(mutex_);
  DriverModule* raw = m.get();
  modules_.emplace(raw, std::move(m));
  return reinterpret_cast<CUmodule>(raw);
}

CUfunction DriverHandles::add(std::unique_ptr<DriverFunction> f) {
  std::lock_guard lock(mutex_);
  auto [named, fresh] = by_name_.emplace(std::make_pair(f->module, f->name), f.get());
  if (!fresh) return reinterpret_cast<CUfunction>(named->second);  // another thread's lookup came first
  DriverFunction* raw = f.get();
  functions_.emplace(raw, std::move(f));
  return reinterpret_cast<CUfunction>(raw);
}

DriverModule* DriverHandles::find(CUmodule m) {
  std::lock_guard lock(mutex_);
  auto it = modules_.find(reinterpret_cast<DriverModule*>(m));
  return it == modules_.end() ? nullptr : it->second.get();
}

DriverFunction* DriverHandles::find(CUfunction f) {
  std::lock_guard lock(mutex_);
  auto it = functions_.find(reinterpret_cast<DriverFunction*>(f));
  return it == functions_.end() ? nullptr : it->second.get();
}

CUfunction DriverHandles::find_function(int device, uint64_t remote) {
  std::lock_guard lock(mutex_);
  for (const auto& [p, f] : functions_)
    if (f->module->device == device && f->kernel.function == remote) return reinterpret_cast<CUfunction>(p);
  return nullptr;
}

CUfunction DriverHandles::find_function(const DriverModule* m, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = by_name_.find(std::make_pair(m, name));
  return it == by_name_.end() ? nullptr : reinterpret_cast<CUfunction>(it->second);
}

void DriverHandles::add_managed_variable(DriverModule* m, uint64_t address, int device) {
  std::lock_guard lock(mutex_);
  m->managed_variables[address] = device;
}

void DriverHandles::forget_device(int device) { drop_device(device, false); }

void DriverHandles::reload_on_next_use(int device) { drop_device(device, true); }

std::vector<DriverHandles::LoadedImage> DriverHandles::images_on(int device) {
  std::lock_guard lock(mutex_);
  std::map<const DriverModule*, LoadedImage> out;
  for (const auto& [p, m] : modules_)
    if ((m->device == device && m->remote) || m->elsewhere.count(device)) out[p].image = m->image;
  for (const auto& [p, f] : functions_)
    if (auto it = out.find(f->module); it != out.end()) it->second.functions.push_back(f->name);
  std::vector<LoadedImage> images;
  for (auto& [m, image] : out) images.push_back(std::move(image));
  return images;
}

void DriverHandles::drop_device(int device, bool modules) {
  std::lock_guard lock(mutex_);
  for (const auto& [p, m] : modules_) {
    m->elsewhere.erase(device);
    if (m->device == device && (m->library || modules)) m->remote = 0;
    std::erase_if(m->managed_variables, [&](const auto& v) {
      if (v.second != device) return false;
      remove_managed_variable(v.first);
      return true;
    });
  }
  for (const auto& [p, f] : functions_) {
    f->elsewhere.erase(device);
    if (f->module->device == device && f->module->remote == 0) f->kernel.function = 0;
  }
}

bool DriverHandles::remove(CUmodule m) {
  std::lock_guard lock(mutex_);
  auto it = modules_.find(reinterpret_cast<DriverModule*>(m));
  if (it == modules_.end()) return false;
  std::erase_if(by_name_, [&](const auto& n) { return n.first.first == it->first; });
  std::erase_if(functions_, [&](const auto& f) {
    if (f.second->module != it->first) return false;
    forget_answers(*f.second);
    return true;
  });
  for (const auto& [address, device] : it->first->managed_variables) remove_managed_variable(address);
  GivenVariables::get().forget(it->first);
  modules_.erase(it);
  return true;
}

}  // namespace rgpu::client
