#include "client/move/module_variables.hpp"

#include <string>

#include "client/core/memory_map.hpp"
#include "client/move/content_copy.hpp"
#include "client/move/move_refusal.hpp"
#include "common/log.hpp"

namespace rgpu::client {

std::vector<std::pair<VarEntry*, LoadedVar>> movable_vars(int device) {
  auto vars = ModuleRegistry::get().loaded_vars(device);
  for (const auto& [var, loaded] : vars)
    if (var->managed_pointer) throw MoveRefusal("the session's modules hold managed variables (" + var->name + ")");
  return vars;
}

VarContents read_vars(Session& from, int remote, const std::vector<std::pair<VarEntry*, LoadedVar>>& vars) {
  VarContents out;
  for (const auto& [var, loaded] : vars) {
    std::vector<uint8_t> bytes(loaded.size);
    if (loaded.size) read_device(from, remote, loaded.address, bytes.data(), loaded.size);
    out.emplace_back(var, std::move(bytes));
  }
  return out;
}

std::vector<GivenContents> read_given(Session& from, int remote, int device) {
  std::vector<GivenContents> out;
  for (GivenVariable& g : GivenVariables::get().on_device(device)) {
    std::vector<uint8_t> bytes(g.size);
    const uint64_t at = MemoryMap::get().device_side(g.address).value_or(g.address);
    if (g.size) read_device(from, remote, at, bytes.data(), g.size);
    out.push_back({std::move(g), std::move(bytes)});
  }
  return out;
}

void keep_given(const std::vector<GivenContents>& given, Session& to, int gpu) {
  for (const GivenContents& g : given) {
    uint64_t now = 0;
    std::string failed;
    if (cudaError_t e = g.var.find_again(&now)) {
      failed = std::string(cudaGetErrorName(e));
    } else {
      try {
        if (!g.bytes.empty()) write_device(to, gpu, now, g.bytes.data(), g.bytes.size());
      } catch (const std::exception& e) {
        failed = e.what();
      }
      if (failed.empty() && now != g.var.address &&
          !MemoryMap::get().add_moved_variable(g.var.address, g.var.size, g.var.device, now))
        failed = "its address names other memory of the application";
    }
    if (!failed.empty())
      RGPU_LOG(error, "moved session: the module variable at 0x%llx, whose address the application holds, is lost (%s)",
               static_cast<unsigned long long>(g.var.address), failed.c_str());
  }
}

}  // namespace rgpu::client
