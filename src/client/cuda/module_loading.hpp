// The steps of the driver's module calls that the runtime's libraries
// (cudaLibrary*) share: errors as cudaError_t, run inside api().
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "client/cuda/module_handles.hpp"

namespace rgpu::client {

// A whole image (fat binary, cubin or PTX) loaded on the current device.
cudaError_t load_module(CUmodule* module, const void* image);
// The same for a library, which keeps a copy of the image to load it on
// other devices when it is used there.
cudaError_t load_library(CUmodule* library, const void* image);
// The function as loaded on `device`: a library's is loaded there on first
// use; a module's exists on its own device only (cudaErrorDeviceUninitialized
// elsewhere).
cudaError_t function_on(DriverFunction* f, int device, LoadedKernel** out);
// Library load options (the driver's CUlibraryOption values are the same):
// cudaLibraryBinaryIsPreserved is a hint rgpu has no use for (it keeps its
// own copy of the image) and is invalid for a file; the host table of
// universal functions is cudaErrorNotSupported, logged by name.
cudaError_t check_library_options(const cudaLibraryOption* options, unsigned count, bool from_file);
// A file's contents, NUL-terminated (PTX files carry no terminator); false
// when it cannot be read.
bool read_image_file(const char* path, std::vector<char>* image);
// A kernel of the module by name (cudaErrorInvalidDeviceFunction or
// cudaErrorSymbolNotFound when it has none of that name).
cudaError_t get_function(CUfunction* out, DriverModule* m, const char* name);
// Every kernel of the module, each a new handle.
cudaError_t enumerate_functions(DriverModule* m, std::vector<CUfunction>* out);
// The variable as `device` has it (a library's device may be any, a
// module's only its own). A managed one (`.attribute(.managed)`,
// `__managed__`) lives in the server driver's managed memory; the host
// reaches it here at the same address, kept coherent (managed_memory.hpp),
// until the module is unloaded.
cudaError_t get_global(CUdeviceptr* dptr, size_t* bytes, DriverModule* m, const char* name, int device);
// get_global for the application: the address it is handed, a session move
// keeps standing for the variable (given_variables.hpp).
cudaError_t hand_out_global(CUdeviceptr* dptr, size_t* bytes, DriverModule* m, const char* name, int device);
// A library's managed variable (cuLibraryGetManaged), as get_global gives
// it: cudaErrorSymbolNotFound when it has no managed variable of that name.
cudaError_t get_managed(CUdeviceptr* dptr, size_t* bytes, DriverModule* m, const char* name, int device);
// A library's unified function (cuLibraryGetUnifiedFunction): a host-callable
// pointer into the GPU's memory exists only where host and GPU share one
// address space, never in this process; rgpu reports no device with unified
// function pointers, and the driver documents cudaErrorSymbolNotFound then.
cudaError_t get_unified_function(DriverModule* m, const char* symbol);

}  // namespace rgpu::client
