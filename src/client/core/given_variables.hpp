// Module variables whose address the application was handed
// (cudaGetSymbolAddress, cuModuleGetGlobal, cu/cudaLibraryGetGlobal; cuBLAS
// keeps one so). A session move loads the module again on the target, where
// the driver puts the variable elsewhere: the move finds each one again
// there, copies its contents, and the application's address then stands for
// the new one in copies and kernel arguments (MemoryMap::add_moved_variable).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace rgpu::client {

struct GivenVariable {
  int device;
  uint64_t address;  // as the application holds it
  size_t size;
  const void* owner;  // its module (DriverModule) or variable (VarEntry)
  // Where it lies on its device's server now, loading its module there first.
  std::function<cudaError_t(uint64_t* address)> find_again;
};

class GivenVariables {
 public:
  static GivenVariables& get();
  // One entry per device and address.
  void add(GivenVariable v);
  // Its module is gone.
  void forget(const void* owner);
  std::vector<GivenVariable> on_device(int device) const;

 private:
  mutable std::mutex mutex_;
  std::vector<GivenVariable> given_;
};

}  // namespace rgpu::client
