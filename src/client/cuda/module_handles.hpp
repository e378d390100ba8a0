// CUmodule and CUfunction handles: client objects naming the server's
// module and function, kept in a table so a bogus handle is refused rather
// than followed.
#pragma once
#include "client/cuda/cuda_api.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/core/module_registry.hpp"

namespace rgpu::client {

struct DriverModule {
  int device;       // virtual device the module was loaded on
  uint64_t remote;  // server handle; 0: to load again (a library whose device was reset, a moved session's)
  // A library (cuLibrary*, cudaLibrary*) is not bound to a context: it is
  // loaded on another device at its first use there, from this copy of its
  // image. A module is loaded again from it when its session moves.
  std::shared_ptr<const std::vector<uint8_t>> image;
  bool library = false;
  std::unordered_map<int, uint64_t> elsewhere;  // device -> server handle
  // Its managed variables the host reaches (address -> device), under
  // DriverHandles' lock; the host stops reaching them with the module.
  std::map<uint64_t, int> managed_variables;
};

struct LegacyLaunchState;  // legacy_launch.cpp

struct DriverFunction {
  DriverModule* module;
  std::string name;
  LoadedKernel kernel;                              // on module->device
  std::unordered_map<int, LoadedKernel> elsewhere;  // a library's, on other devices
  // What cuFuncSetBlockShape, cuFuncSetSharedSize and cuParamSet* set for
  // cuLaunch; made at the first of them.
  std::shared_ptr<LegacyLaunchState> legacy;
};

class DriverHandles {
 public:
  static DriverHandles& get();
  CUmodule add(std::unique_ptr<DriverModule> m);
  // A function of a module: the handle given out for its name before, if any.
  CUfunction add(std::unique_ptr<DriverFunction> f);
  // nullptr unless the handle is live.
  DriverModule* find(CUmodule m);
  DriverFunction* find(CUfunction f);
  // The function naming server function `remote` on `device`, or null.
  CUfunction find_function(int device, uint64_t remote);
  // The module's function of that name handed out before, or null: the
  // driver hands out one handle per kernel, and NVIDIA's runtime relies on it.
  CUfunction find_function(const DriverModule* m, const std::string& name);
  // The module's managed variable at `address` on `device` is reachable by the host.
  void add_managed_variable(DriverModule* m, uint64_t address, int device);
  // Forgets the module and its functions, and the host stops reaching its
  // managed variables; false if it was not live.
  bool remove(CUmodule m);
  // The device was reset: what its server held is gone. A library, which no
  // context owns, is loaded again at its next use there (remote handles 0;
  // NVIDIA's runtime keeps its libraries across cudaDeviceReset); a module
  // dies with it. Either way its managed variables there are gone.
  void forget_device(int device);
  // The device's session moved to another server (docs/migration.md): every
  // module and library there is loaded again from its image at its next
  // use, and its functions looked up again.
  void reload_on_next_use(int device);
  // The images of the modules and libraries loaded on `device`, with the
  // names of the functions handed out of each (a move loads them on its
  // target ahead of the pause).
  struct LoadedImage {
    std::shared_ptr<const std::vector<uint8_t>> image;
    std::vector<std::string> functions;
  };
  std::vector<LoadedImage> images_on(int device);

 private:
  // Forgets the device's server handles; a module's too when `modules`.
  void drop_device(int device, bool modules);

  std::mutex mutex_;
  std::unordered_map<DriverModule*, std::unique_ptr<DriverModule>> modules_;
  std::unordered_map<DriverFunction*, std::unique_ptr<DriverFunction>> functions_;
  // Each module's functions by name: one handle per kernel.
  std::map<std::pair<const DriverModule*, std::string>, DriverFunction*> by_name_;
};

}  // namespace rgpu::client
