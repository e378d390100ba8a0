// A large memcpy split across a few resident threads: one core copies more
// slowly than the GPU's DMA fills or drains a staging slot.
#pragma once
#include <cstddef>

namespace rgpu::client {

// Copies n bytes; large copies are shared with helper threads when they are
// free (another thread's copy may hold them), else done by the caller alone.
void parallel_memcpy(void* dst, const void* src, size_t n);

}  // namespace rgpu::client
