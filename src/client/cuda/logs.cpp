// cuLogs*: the runtime's cudaLogs* under the driver's names (the same log,
// the same callback entries; CUlogLevel has cudaLogLevel's values), leaving
// the runtime's last error as it was.
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

static_assert(static_cast<int>(CU_LOG_LEVEL_ERROR) == static_cast<int>(cudaLogLevelError) &&
              static_cast<int>(CU_LOG_LEVEL_WARNING) == static_cast<int>(cudaLogLevelWarning));

extern "C" CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                                   CUlogsCallbackHandle* callback_out) {
  KeepLastError keep;
  return to_cu(cudaLogsRegisterCallback(reinterpret_cast<cudaLogsCallback_t>(callbackFunc), userData, callback_out));
}

extern "C" CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  KeepLastError keep;
  return to_cu(cudaLogsUnregisterCallback(callback));
}

extern "C" CUresult CUDAAPI cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) {
  KeepLastError keep;
  return to_cu(cudaLogsCurrent(iterator_out, flags));
}

extern "C" CUresult CUDAAPI cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile, unsigned int flags) {
  KeepLastError keep;
  return to_cu(cudaLogsDumpToFile(iterator, pathToFile, flags));
}

extern "C" CUresult CUDAAPI cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer, size_t* size,
                                               unsigned int flags) {
  KeepLastError keep;
  return to_cu(cudaLogsDumpToMemory(iterator, buffer, size, flags));
}
