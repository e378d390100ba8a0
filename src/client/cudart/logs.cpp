// cudaLogs*: rgpu's own error log (client/core/error_log.hpp), the errors
// and warnings of this process's client; the remote driver's log is the
// worker's.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "client/core/api_guard.hpp"
#include "client/core/error_log.hpp"

using namespace rgpu::client;

extern "C" cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t callbackFunc, void* userData,
                                                cudaLogsCallbackHandle* callback_out) {
  return api([&] { return ErrorLog::get().add_callback(callbackFunc, userData, callback_out); });
}

extern "C" cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle callback) {
  return api([&] { return ErrorLog::get().remove_callback(callback); });
}

extern "C" cudaError_t cudaLogsCurrent(cudaLogIterator* iterator_out, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!iterator_out || flags) return cudaErrorInvalidValue;
    *iterator_out = ErrorLog::get().current();
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaLogsDumpToFile(cudaLogIterator* iterator, const char* pathToFile, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!pathToFile || flags) return cudaErrorInvalidValue;
    FILE* f = std::fopen(pathToFile, "w");
    if (!f) return cudaErrorInvalidValue;
    std::string text = ErrorLog::get().dump(iterator);
    bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    return std::fclose(f) == 0 && written ? cudaSuccess : cudaErrorInvalidValue;
  });
}

extern "C" cudaError_t cudaLogsDumpToMemory(cudaLogIterator* iterator, char* buffer, size_t* size,
                                            unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (flags) return cudaErrorInvalidValue;
    return ErrorLog::get().dump_to_memory(iterator, buffer, size);
  });
}
