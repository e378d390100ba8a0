// The fat binaries, kernels and device variables the application's host code
// registered (__cudaRegisterFatBinary/Function/Var). Each fat binary is
// loaded on a device lazily, at the first use of one of its kernels or
// variables there, and shipped to that server at most once per session.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace rgpu::client {

struct KernelParamLayout {
  uint32_t offset;
  uint32_t size;
};

struct LoadedKernel {
  uint64_t function = 0;  // server handle; 0 if the module lacks the kernel
  std::vector<KernelParamLayout> params;
  uint32_t args_size = 0;
  int32_t max_dynamic_shared = 0;  // bytes a launch may ask for
};

struct LoadedVar {
  uint64_t address = 0;
  size_t size = 0;
};

struct FatBinary;

struct ManagedVariableHooks {
  cudaError_t (*add)(uint64_t address, size_t size, int device) = nullptr;
  void (*remove)(uint64_t address) = nullptr;
};

struct KernelEntry {
  FatBinary* fatbin;
  const void* host_function;
  std::string name;
  std::unordered_map<int, LoadedKernel> loaded;  // by virtual device
};

struct VarEntry {
  FatBinary* fatbin;
  const void* host_var;
  std::string name;
  size_t size;
  std::unordered_map<int, LoadedVar> loaded;
  // A __managed__ variable's host pointer (nvcc's host code reaches the
  // variable through it): set to its address when its module first loads.
  void** managed_pointer = nullptr;
};

struct FatBinary {
  const void* image;
  size_t size;
  std::vector<KernelEntry*> kernels;
  std::vector<VarEntry*> vars;
  std::unordered_map<int, cudaError_t> load_status;  // by virtual device
};

// The fat binary nvcc's wrapper (__fatBinC_Wrapper_t, what its host code
// registers) points at, or `image` itself when it is no wrapper: NVIDIA's
// runtime hands the driver either. Reads no further than a mismatch, so a
// short PTX string is safe.
const void* fatbin_image(const void* image);

class ModuleRegistry {
 public:
  static ModuleRegistry& get();

  void** add_fatbin(const void* wrapper);
  void add_function(void** handle, const void* host_function, const char* name);
  void add_var(void** handle, const void* host_var, const char* name, size_t size);
  // A __managed__ variable; `hooks` make such variables reachable by the
  // host (the runtime's managed memory, which this layer does not know).
  void add_managed_var(void** handle, void** host_pointer, const char* name, size_t size,
                       const ManagedVariableHooks& hooks);
  // The fat binary loaded on the current device (__cudaInitModule, before
  // the host first touches one of its managed variables).
  cudaError_t init_module(void** handle);
  void remove_fatbin(void** handle);

  // A kernel by host stub address or by the cudaKernel_t we handed out.
  KernelEntry* find_kernel(const void* func);
  // By host variable, or by address for a managed one (nvcc's host code
  // names it by what its host pointer points to).
  VarEntry* find_var(const void* symbol);
  // The kernel loaded on `device` as server function `function` (from a
  // graph's kernel node), or null.
  KernelEntry* find_loaded(int device, uint64_t function);

  // The kernel or variable as loaded on a device, loading its module first.
  cudaError_t kernel_on(KernelEntry* k, int device, const LoadedKernel** out);
  cudaError_t var_on(VarEntry* v, int device, const LoadedVar** out);
  // After cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize).
  void set_max_dynamic_shared(KernelEntry* k, int device, int32_t bytes);
  // After cudaDeviceReset the device's modules are gone.
  void forget_device(int device);
  // The device's session moved to another server (docs/migration.md): its
  // modules load there at their next use, and then their variables get the
  // contents they had (`contents`, or an earlier move's not yet loaded).
  void moved_device(int device, std::vector<std::pair<VarEntry*, std::vector<uint8_t>>> contents);
  // The variables loaded on `device`, with where they are there.
  std::vector<std::pair<VarEntry*, LoadedVar>> loaded_vars(int device);
  // The fat binaries loaded on `device`, with their kernels' names.
  struct LoadedImage {
    const void* image;
    size_t size;
    std::vector<std::string> kernels;
  };
  std::vector<LoadedImage> loaded_images(int device);

 private:
  cudaError_t load(FatBinary* fb, int device);
  void forget_loaded(int device);
  // The moved contents of fb's variables, written where they now are.
  void restore_moved(FatBinary* fb, int device);
  // A variable the server reported managed on `device`: reachable by the
  // host at its address, and known by it.
  void take_managed(VarEntry* v, int device, LoadedVar* lv);

  std::recursive_mutex mutex_;
  std::vector<std::unique_ptr<FatBinary>> fatbins_;
  std::vector<std::unique_ptr<KernelEntry>> kernel_store_;
  std::vector<std::unique_ptr<VarEntry>> var_store_;
  std::unordered_map<const void*, KernelEntry*> kernels_;  // host stub and cudaKernel_t
  std::unordered_map<const void*, VarEntry*> vars_;
  ManagedVariableHooks managed_hooks_;
  std::map<std::pair<int, VarEntry*>, std::vector<uint8_t>> moved_contents_;  // by device and variable
};

}  // namespace rgpu::client
