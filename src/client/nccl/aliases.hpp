// NVIDIA's libnccl.so.2 exports each function twice: ncclX and pncclX (the
// profiling interface's name). The p-name is an alias of the function
// defined in the same file.
#pragma once

#define RGPU_NCCL_ALIAS(name) extern "C" __typeof__(name) p##name __attribute__((alias(#name)));
