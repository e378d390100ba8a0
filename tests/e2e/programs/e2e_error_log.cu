// cudaLogs* and cuLogs*: rgpu's own error log. Its warnings (here: calls
// rgpu does not support) reach registered callbacks, and can be dumped to
// memory and to a file from an iterator.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

#include "driver_check.h"

static std::string g_seen;
static int g_level = -1;

static void on_log(void* data, cudaLogLevel level, char* message, size_t length) {
  g_seen.assign(message, length);
  g_level = level;
  ++*static_cast<int*>(data);
}

int main() {
  cudaLogIterator start = 0;
  OK(cudaLogsCurrent(&start, 0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLogsCurrent(nullptr, 0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLogsCurrent(&start, 1));
  int calls = 0;
  cudaLogsCallbackHandle handle;
  OK(cudaLogsRegisterCallback(on_log, &calls, &handle));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLogsRegisterCallback(nullptr, nullptr, &handle));

  char attributes[64];
  EXPECT_STATUS(cudaErrorNotSupported, cudaDeviceGetNvSciSyncAttributes(attributes, 0, cudaNvSciSyncAttrSignal));
  CHECK(calls == 1);
  CHECK(g_level == cudaLogLevelWarning);
  CHECK(g_seen.find("cudaDeviceGetNvSciSyncAttributes") != std::string::npos);

  cudaLogIterator it = start;
  char buffer[4096];
  size_t size = sizeof buffer;
  OK(cudaLogsDumpToMemory(&it, buffer, &size, 0));
  CHECK(size > 0 && std::strlen(buffer) == size);
  CHECK(std::string(buffer).find("cudaDeviceGetNvSciSyncAttributes") != std::string::npos);
  cudaLogIterator now = 0;
  OK(cudaLogsCurrent(&now, 0));
  CHECK(it == now);
  size = sizeof buffer;
  OK(cudaLogsDumpToMemory(&it, buffer, &size, 0));  // nothing new
  CHECK(size == 0);
  size = 4;  // too small for any message
  it = start;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLogsDumpToMemory(&it, buffer, &size, 0));

  OK(cudaLogsUnregisterCallback(handle));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLogsUnregisterCallback(handle));

  // The driver's names: the same log.
  CU_OK(cuInit(0));
  CUlogIterator from = 0;
  CU_OK(cuLogsCurrent(&from, 0));
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuDeviceGetNvSciSyncAttributes(attributes, 0, CUDA_NVSCISYNC_ATTR_SIGNAL));
  CHECK(calls == 1);  // unregistered
  char path[] = "/tmp/rgpu-e2e-error-log-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  CU_OK(cuLogsDumpToFile(&from, path, 0));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("cuDeviceGetNvSciSyncAttributes") != std::string::npos);
  CHECK(text.find("cudaDeviceGetNvSciSyncAttributes") == std::string::npos);
  unlink(path);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLogsDumpToFile(&from, nullptr, 0));
  CUlogsCallbackHandle driver_handle;
  CU_OK(cuLogsRegisterCallback(reinterpret_cast<CUlogsCallback>(on_log), &calls, &driver_handle));
  CU_OK(cuLogsUnregisterCallback(driver_handle));
  return finish();
}
