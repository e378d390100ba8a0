// The cudart interface table: how NVIDIA's runtime loads the fat binaries
// its host code registered (__cudaRegisterFatBinary) and finds a device's
// primary context. Modules load through rgpu's cuModuleLoadData, so they
// reach the server the way the application's own modules do.
#include <cstdint>

#include "client/cuda/export_tables/export_tables.hpp"
#include "client/cuda/primary_context.hpp"
#include "common/log.hpp"

namespace rgpu::client {

namespace {

// The image may be nvcc's wrapper around it, which cuModuleLoadData unwraps.
CUresult CUDAAPI module_from_wrapper(CUmodule* module, const void* wrapper) {
  return cuModuleLoadData(module, wrapper);
}

// The extended forms carry arguments whose meaning is unknown; seen null.
CUresult CUDAAPI module_from_wrapper_ext(CUmodule* module, const void* wrapper, void* a3, void* a4, unsigned a5) {
  if (a3 || a4 || a5) RGPU_LOG(debug, "cudart interface: module load with extra arguments %p %p %u", a3, a4, a5);
  return cuModuleLoadData(module, wrapper);
}

CUresult CUDAAPI module_from_image_ext(const void* image, CUmodule* module, void* a3, void* a4, unsigned a5) {
  if (a3 || a4 || a5) RGPU_LOG(debug, "cudart interface: module load with extra arguments %p %p %u", a3, a4, a5);
  return cuModuleLoadData(module, image);
}

// The device's primary context, not retained (the runtime retains it itself).
CUresult CUDAAPI primary_context_of(CUcontext* ctx, CUdevice device) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  int count = 0;
  if (CUresult e = cuDeviceGetCount(&count)) return e;
  if (device < 0 || device >= count) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = primary_context(device);
  return CUDA_SUCCESS;
}

void CUDAAPI runtime_notice(uintptr_t) {}

// NVIDIA's driver loads its PTX compiler and NVVM here; the server's driver
// compiles for rgpu.
CUresult CUDAAPI load_compilers() { return CUDA_SUCCESS; }

}  // namespace

const void* cudart_interface_table() {
  static const ExportTable<ExportTableId::cudart_interface, 13> table(
      true, {{1, slot_fn(module_from_wrapper)},
             {2, slot_fn(primary_context_of)},
             {6, slot_fn(module_from_wrapper_ext)},
             {7, slot_fn(runtime_notice)},
             {8, slot_fn(module_from_image_ext)},
             {10, nullptr},
             {12, slot_fn(load_compilers)}});
  return table.data();
}

}  // namespace rgpu::client
