// Shareable handles (cuMemExportToShareableHandle, pool exports) between
// the application and its worker. A POSIX file descriptor handle is a
// descriptor of the application's process: over shm the worker's own
// descriptor, which arrives with its reply; elsewhere (tcp, ucx) a stand-in
// holding the token of the descriptor the worker keeps
// (descriptor_stand_in.hpp). An import sends a stand-in's token on any
// transport, and over shm hands any other descriptor to the worker beside
// the request. Fabric handles travel as their bytes everywhere.
#pragma once
#include <cuda_runtime_api.h>

#include "client/core/call.hpp"

namespace rgpu::client {

// Whether `type` (CUmemAllocationHandleType) is a shareable handle type
// rgpu carries: cudaErrorInvalidValue if not.
cudaError_t check_shareable_type(int type);

// Runs an export whose arguments are in `call` and stores its handle at
// `out`: an int for a descriptor (the application's to close), the
// CUmemFabricHandle for a fabric handle.
cudaError_t run_export(Call& call, int type, void* out);

// Appends the handle an import names and runs the call: `in` is the
// descriptor itself (cast to a pointer, as CUDA takes it) or the address of
// a fabric handle. The application keeps its descriptor. `api` names the
// call in the log.
cudaError_t run_import(Call& call, int type, void* in, const char* api);

}  // namespace rgpu::client
