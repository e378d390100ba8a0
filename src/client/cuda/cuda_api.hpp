// cuda.h as the library implementing it sees it: every exported name
// declared as itself (cuMemAlloc_v2 and the legacy cuMemAlloc alike), not
// mapped by macros to the newest version as applications see them.
#pragma once
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
