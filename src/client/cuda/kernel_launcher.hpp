// Launches and per-kernel queries of a kernel named by any handle either API
// hands out: a host stub or cudaKernel_t of the registered fat binaries
// (cudaGetKernel), or a CUfunction / CUkernel / library cudaKernel_t of a
// module the application loaded (cuModuleGetFunction, cuLibraryGetKernel,
// cudaLibraryGetKernel). So cudaLaunchKernel takes a CUkernel and
// cuLaunchKernel a cudaKernel_t, as CUDA allows.
#pragma once
#include <cuda_runtime_api.h>

#include <span>

#include "client/core/module_registry.hpp"
#include "protocol/codec.hpp"

namespace rgpu::client {

// True when the handle names a kernel of either kind.
bool known_kernel(const void* handle);
// The kernel as loaded on `device`: a registered one or a library's is
// loaded there on first use; a module's lives on the device it was loaded on
// (cudaErrorDeviceUninitialized elsewhere, the driver's invalid context).
cudaError_t resolve_kernel(const void* handle, int device, const LoadedKernel** out);

// The kernel's (mangled) name; null for an unknown handle.
const char* kernel_name(const void* handle);
// The device a kernel's module lives on; for a registered kernel (loaded
// wherever it is used) the current device.
int home_device(const void* handle);
// After cudaFuncSetAttribute / cuFuncSetAttribute raised the kernel's
// dynamic shared memory limit on `device`.
void note_max_dynamic_shared(const void* handle, int device, int32_t bytes);

struct KernelLaunch {
  dim3 grid, block;
  size_t shared_mem = 0;
  cudaStream_t stream = nullptr;
  void** params = nullptr;
  void** extra = nullptr;  // the driver's CU_LAUNCH_PARAM_* list, instead of params
  std::span<const cudaLaunchAttribute> attributes = {};
  bool cooperative = false;
};

// Checked as the local runtime checks, packed, and posted; a cooperative
// launch is answered (whether the grid fits at once is its own error).
cudaError_t launch_kernel(const void* kernel, const KernelLaunch& l);

// A thread block cluster occupancy query (op kOpOccupancyMaxActiveClusters
// or kOpOccupancyMaxPotentialClusterSize) over a launch configuration; no
// arguments are sent.
cudaError_t cluster_occupancy(uint16_t op, const void* kernel, const KernelLaunch& l, int* out);

// Writes a count and the attributes for the server, their events as the
// server's handles (they must live on `device`). Refuses the graph-only
// attribute with cudaErrorNotSupported, naming it. Sets *cooperative when
// one asks for a cooperative launch.
cudaError_t put_launch_attributes(std::span<const cudaLaunchAttribute> attributes, int device, proto::Writer& w,
                                  bool* cooperative);

}  // namespace rgpu::client
