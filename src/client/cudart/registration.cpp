// The entry points nvcc's generated host code calls at program start to
// register fat binaries, kernels and device variables.
#include <cuda_runtime_api.h>

#include "client/cuda/cuda_api.hpp"

#include "client/core/module_registry.hpp"
#include "client/core/unsupported.hpp"
#include "client/cudart/managed_memory.hpp"
#include "common/log.hpp"

using namespace rgpu::client;

extern "C" void** __cudaRegisterFatBinary(void* fatCubin) {
  return ModuleRegistry::get().add_fatbin(fatCubin);
}

extern "C" void __cudaRegisterFatBinaryEnd(void** /*fatCubinHandle*/) {}

extern "C" void __cudaUnregisterFatBinary(void** fatCubinHandle) {
  ModuleRegistry::get().remove_fatbin(fatCubinHandle);
}

extern "C" void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* /*deviceFun*/,
                                       const char* deviceName, int /*thread_limit*/, uint3* /*tid*/,
                                       uint3* /*bid*/, dim3* /*bDim*/, dim3* /*gDim*/, int* /*wSize*/) {
  ModuleRegistry::get().add_function(fatCubinHandle, hostFun, deviceName);
}

extern "C" void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* /*deviceAddress*/,
                                  const char* deviceName, int /*ext*/, size_t size, int /*constant*/,
                                  int /*global*/) {
  ModuleRegistry::get().add_var(fatCubinHandle, hostVar, deviceName, size);
}

// The host code reaches a __managed__ variable through *hostVarPtrAddress,
// which points to it once its module is loaded (as NVIDIA's runtime does);
// the host then works on a coherent copy (managed_memory.hpp).
extern "C" void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress, char* /*deviceAddress*/,
                                         const char* deviceName, int /*ext*/, size_t size, int /*constant*/,
                                         int /*global*/) {
  ModuleRegistry::get().add_managed_var(fatCubinHandle, hostVarPtrAddress, deviceName, size,
                                        {add_managed_variable, remove_managed_variable});
}

// Called by the host code before it first touches a managed variable: 0
// (the variable unreachable) is logged.
extern "C" char __cudaInitModule(void** fatCubinHandle) {
  cudaError_t e = ModuleRegistry::get().init_module(fatCubinHandle);
  if (e != cudaSuccess)
    RGPU_LOG(error, "loading a fat binary for its managed variables failed (%d): the host cannot reach them",
             static_cast<int>(e));
  return e == cudaSuccess;
}

// Undocumented entry points that no nvcc 13 output we have seen calls; they
// exist so programs linked against NVIDIA's library load, and report clearly.
extern "C" cudaError_t __cudaRegisterHostVar(void*) { return unsupported("__cudaRegisterHostVar"); }
extern "C" cudaError_t __cudaRegisterUnifiedTable(void*) { return unsupported("__cudaRegisterUnifiedTable"); }
extern "C" cudaError_t __cudaGetProcAddress(void*) { return unsupported("__cudaGetProcAddress"); }
// The driver's private tables (NVIDIA's runtime hands them on the same
// way); an id only NVIDIA's runtime knows is logged by the driver's lookup.
extern "C" cudaError_t cudaGetExportTable(const void** table, const cudaUUID_t* id) {
  static_assert(sizeof(cudaUUID_t) == sizeof(CUuuid));
  return cuGetExportTable(table, reinterpret_cast<const CUuuid*>(id)) == CUDA_SUCCESS ? cudaSuccess
                                                                                      : cudaErrorInvalidValue;
}
