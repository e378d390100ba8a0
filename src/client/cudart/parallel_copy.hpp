// Work split across a few resident helper threads: one core copies more
// slowly than the GPU's DMA fills or drains a staging slot, and one TCP
// stream moves data only as fast as the one core that feeds it.
#pragma once
#include <cstddef>
#include <functional>

namespace rgpu::client {

// Threads a job may use, the caller included (striped transfers wait on
// sockets as much as they copy, so they may use more than memory copies do).
unsigned parallel_threads();

// Runs work(part) for every part in [0, parts) at once, the caller taking
// part 0, and returns when all are done. False, with nothing run, when the
// helpers are busy with another thread's job or parts exceeds
// parallel_threads().
bool run_in_parallel(unsigned parts, const std::function<void(unsigned part)>& work);

// Copies n bytes; large copies are shared with helper threads when they are
// free, else done by the caller alone.
void parallel_memcpy(void* dst, const void* src, size_t n);

}  // namespace rgpu::client
