// Staging memory for graph copies of pageable host memory (see
// graph/staged_copy.hpp): over shm, blocks of page-locked memory shared with
// a device's server, which a graph's copy node reaches as host memory; where
// the server cannot reach this process (tcp, ucx), blocks of the worker's own
// page-locked memory (kOpGraphStagingAlloc), known here only by the worker's
// address, which the host node's bytes reach over the callback connection.
// Blocks come in power-of-two sizes, small ones carved from slabs; a block
// given back serves the next copy of its size, and slabs stay until the
// process ends or the device is reset. So a program that captures a copy on every iteration (as
// NVIDIA's jacobiCudaGraphs does) costs no round trip and no descriptor per
// copy, and giving a block back needs no call to the server (it happens in a
// user object's destructor, where calls to the server must not be made).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace rgpu::client {

struct StagingBlock {
  char* base = nullptr;  // over tcp and ucx the worker's address, not this process's
  size_t size = 0;
  uint64_t generation = 0;  // StagingBlocks::forget's count when taken
};

class StagingBlocks {
 public:
  // Memory of `bytes` for a slab, null when there is none to be had.
  using SlabSource = std::function<char*(size_t bytes)>;
  static constexpr size_t kMinBlock = 256;
  static constexpr size_t kSlabBytes = size_t{4} << 20;
  // Larger blocks get a slab of their own.
  static constexpr size_t kMaxCarved = kSlabBytes / 4;
  // More than any host could stage (and than a power of two can round up to).
  static constexpr size_t kMaxBlock = size_t{1} << 48;

  explicit StagingBlocks(SlabSource source) : source_(std::move(source)) {}
  // A block of at least n bytes; base is null when no memory could be had.
  StagingBlock take(size_t n);
  void give_back(StagingBlock b);
  // The server freed the slabs (a device reset): none is handed out again,
  // and blocks taken before are dropped when given back.
  void forget();

 private:
  SlabSource source_;
  std::mutex mutex_;
  std::map<size_t, std::vector<char*>> free_;  // by block size
  char* slab_ = nullptr;                        // the slab small blocks are carved from
  size_t slab_left_ = 0;
  uint64_t generation_ = 0;
};

// The blocks of `device`: slabs shared with its server over shm, else the worker's.
StagingBlocks& graph_staging(int device);

}  // namespace rgpu::client
