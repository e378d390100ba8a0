#include "server/worker/sticky_faults.hpp"

#include <cuda_runtime_api.h>

#include <atomic>

#include "common/log.hpp"

namespace rgpu::server {

bool is_sticky_fault(int32_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorMpsServerNotReady:
    case cudaErrorMpsClientTerminated:
    case cudaErrorMpsConnectionFailed:
      return true;
    default:
      return false;
  }
}

void report_sticky_fault(ServerCounters* counters, int gpu, int32_t status) {
  static std::atomic<bool> reported{false};
  if (!counters || !is_sticky_fault(status) || reported.exchange(true)) return;
  RGPU_LOG(warn, "GPU %d: the session's context hit a sticky fault (error %d)", gpu, status);
  counters->sticky_fault(gpu);
}

}  // namespace rgpu::server
