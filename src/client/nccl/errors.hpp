// Errors the front-end itself finds: remembered per thread for
// ncclGetLastError, and logged.
#pragma once
#include <nccl.h>

#include <string>

namespace rgpu::nccl {

// Logs why (printf-style), keeps it as the thread's last error, returns `result`.
ncclResult_t fail(ncclResult_t result, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// The thread's last front-end error ("" when none).
const std::string& last_front_end_error();

}  // namespace rgpu::nccl
