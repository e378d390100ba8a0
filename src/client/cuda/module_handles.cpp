#include "client/cuda/module_handles.hpp"

#include <mutex>
#include <unordered_map>

namespace rgpu::client {
namespace {

std::mutex g_mutex;
std::unordered_map<DriverModule*, std::unique_ptr<DriverModule>> g_modules;
std::unordered_map<DriverFunction*, std::unique_ptr<DriverFunction>> g_functions;

}  // namespace

DriverHandles& DriverHandles::get() {
  static DriverHandles handles;
  return handles;
}

CUmodule DriverHandles::add(std::unique_ptr<DriverModule> m) {
  std::lock_guard lock(g_mutex);
  DriverModule* raw = m.get();
  g_modules.emplace(raw, std::move(m));
  return reinterpret_cast<CUmodule>(raw);
}

CUfunction DriverHandles::add(std::unique_ptr<DriverFunction> f) {
  std::lock_guard lock(g_mutex);
  DriverFunction* raw = f.get();
  g_functions.emplace(raw, std::move(f));
  return reinterpret_cast<CUfunction>(raw);
}

DriverModule* DriverHandles::find(CUmodule m) {
  std::lock_guard lock(g_mutex);
  auto it = g_modules.find(reinterpret_cast<DriverModule*>(m));
  return it == g_modules.end() ? nullptr : it->second.get();
}

DriverFunction* DriverHandles::find(CUfunction f) {
  std::lock_guard lock(g_mutex);
  auto it = g_functions.find(reinterpret_cast<DriverFunction*>(f));
  return it == g_functions.end() ? nullptr : it->second.get();
}

bool DriverHandles::remove(CUmodule m) {
  std::lock_guard lock(g_mutex);
  auto it = g_modules.find(reinterpret_cast<DriverModule*>(m));
  if (it == g_modules.end()) return false;
  std::erase_if(g_functions, [&](const auto& f) { return f.second->module == it->first; });
  g_modules.erase(it);
  return true;
}

}  // namespace rgpu::client
