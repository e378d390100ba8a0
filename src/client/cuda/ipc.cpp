// CUDA IPC: the runtime's (cudart/ipc.cpp); CUipc*Handle and
// cudaIpc*Handle are the same 64 bytes.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include <cstring>

#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

static_assert(sizeof(CUipcMemHandle) == sizeof(cudaIpcMemHandle_t));
static_assert(sizeof(CUipcEventHandle) == sizeof(cudaIpcEventHandle_t));

template <typename To, typename From>
To same_bytes(const From& from) {
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

}  // namespace

extern "C" CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  return through_runtime([&] {
    return cudaIpcGetMemHandle(reinterpret_cast<cudaIpcMemHandle_t*>(pHandle), reinterpret_cast<void*>(dptr));
  });
}

extern "C" CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return through_runtime([&] {
    return cudaIpcOpenMemHandle(reinterpret_cast<void**>(pdptr), same_bytes<cudaIpcMemHandle_t>(handle), Flags);
  });
}

// The binding of CUDA before 11.0: the same call.
extern "C" CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}

extern "C" CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr) {
  return through_runtime([&] { return cudaIpcCloseMemHandle(reinterpret_cast<void*>(dptr)); });
}

extern "C" CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) {
  return through_runtime([&] {
    return cudaIpcGetEventHandle(reinterpret_cast<cudaIpcEventHandle_t*>(pHandle), reinterpret_cast<cudaEvent_t>(event));
  });
}

extern "C" CUresult CUDAAPI cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) {
  return through_runtime([&] {
    return cudaIpcOpenEventHandle(reinterpret_cast<cudaEvent_t*>(phEvent), same_bytes<cudaIpcEventHandle_t>(handle));
  });
}
