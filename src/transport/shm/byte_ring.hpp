// A byte stream from one process to another through shared memory: a
// single-producer, single-consumer ring. Each side polls for a while (see
// poll_window.hpp) and then sleeps on a futex, so a request or reply crosses
// in well under a microsecond when both sides are awake, without the two
// system calls and wake-up a socket costs. The memory is shared with a peer
// that may be hostile: indices read from it are checked before use.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace rgpu::transport {

// One direction's control block, in shared memory.
struct RingControl {
  alignas(64) std::atomic<uint64_t> head;  // bytes ever written
  alignas(64) std::atomic<uint64_t> tail;  // bytes ever read
  // Futex words: bumped when data arrives (space frees) while the
  // consumer (producer) sleeps on it.
  alignas(64) std::atomic<uint32_t> data_event;
  std::atomic<uint32_t> consumer_sleeping;
  alignas(64) std::atomic<uint32_t> space_event;
  std::atomic<uint32_t> producer_sleeping;
  std::atomic<uint32_t> closed;  // either side gave up the connection
};

class ByteRing {
 public:
  // Called while a side sleeps, about every 50 ms: throws TransportError
  // when the peer is gone, so nobody waits forever on a dead process.
  using Liveness = std::function<void()>;

  ByteRing(RingControl* control, char* data, size_t capacity, Liveness alive)
      : c_(control), data_(data), capacity_(capacity), alive_(std::move(alive)) {}

  // Producer side: copies n bytes in, waiting for room as needed.
  void write(const void* src, size_t n);
  // Consumer side: copies exactly n bytes out, waiting as needed.
  void read(void* dst, size_t n);
  // Consumer side: waits until a byte can be read or the deadline passes.
  bool wait_readable(std::chrono::steady_clock::time_point deadline);
  // Marks the ring closed and wakes both sides.
  void close();

 private:
  // Copies n bytes in (produce) or out, waiting for room or data.
  void transfer(char* p, size_t n, bool produce);
  size_t readable_bytes() const;
  size_t writable_bytes() const;
  // Polls, then sleeps on `event` until ready() or the deadline.
  template <typename Ready>
  bool wait(Ready ready, std::atomic<uint32_t>& event, std::atomic<uint32_t>& sleeping,
            std::chrono::steady_clock::time_point deadline);

  RingControl* c_;
  char* data_;
  size_t capacity_;
  Liveness alive_;
};

}  // namespace rgpu::transport
