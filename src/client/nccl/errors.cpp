#include "client/nccl/errors.hpp"
#include "client/nccl/unsupported.hpp"

#include "client/nccl/aliases.hpp"

#include <cstdarg>
#include <cstdio>

#include "common/log.hpp"

namespace rgpu::nccl {
namespace {

thread_local std::string t_last_error;

}  // namespace

ncclResult_t fail(ncclResult_t result, const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  t_last_error = text;
  RGPU_LOG(warn, "NCCL: %s", text);
  return result;
}

const std::string& last_front_end_error() { return t_last_error; }

int refuse_unsupported(const char* name) {
  return fail(ncclInvalidUsage, "%s is not supported by rgpu's NCCL front-end", name);
}

}  // namespace rgpu::nccl

extern "C" const char* ncclGetErrorString(ncclResult_t result) {
  // NCCL's own texts.
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

RGPU_NCCL_ALIAS(ncclGetErrorString)
