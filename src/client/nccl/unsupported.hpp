// For unsupported_api.cpp, which must not see nccl.h's prototypes.
#pragma once

namespace rgpu::nccl {

// Logs that `name` is not supported, keeps it as the thread's last error;
// ncclInvalidUsage.
int refuse_unsupported(const char* name);

}  // namespace rgpu::nccl
