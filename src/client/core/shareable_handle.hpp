// Shareable handles (cuMemExportToShareableHandle, pool exports) between
// the application and its worker. A POSIX file descriptor handle is a real
// descriptor of the application's process: the worker's export arrives with
// its reply, and an import hands the application's descriptor to the worker
// beside the request. Descriptors cross only between processes of one host,
// so only over shm; fabric handles travel as their bytes everywhere.
#pragma once
#include <cuda_runtime_api.h>

#include "client/core/call.hpp"

namespace rgpu::client {

// Whether a handle of `type` (CUmemAllocationHandleType) can travel on the
// call's (routed) connection: cudaErrorNotSupported, logged, for a
// descriptor over tcp; cudaErrorInvalidValue for any other type.
cudaError_t check_shareable_type(const Call& call, int type, const char* api);

// Runs an export whose arguments are in `call` and stores its handle at
// `out`: an int for a descriptor (the application's to close), the
// CUmemFabricHandle for a fabric handle.
cudaError_t run_export(Call& call, int type, void* out);

// Appends the handle an import names and runs the call: `in` is the
// descriptor itself (cast to a pointer, as CUDA takes it) or the address of
// a fabric handle. The application keeps its descriptor.
cudaError_t run_import(Call& call, int type, void* in);

}  // namespace rgpu::client
