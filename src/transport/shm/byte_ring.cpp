#include "transport/shm/byte_ring.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>

#include "transport/poll_window.hpp"
#include "transport/transport.hpp"

namespace rgpu::transport {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLivenessPeriod = std::chrono::milliseconds(50);
// Long enough to cover a small synchronous copy's round trip (~10 us):
// a yield is a system call, and the reply lands during one.
constexpr auto kSpinBeforeYield = std::chrono::microseconds(20);

// Shared between processes: no FUTEX_PRIVATE_FLAG.
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::nanoseconds timeout) {
  timespec ts{static_cast<time_t>(timeout.count() / 1000000000), static_cast<long>(timeout.count() % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Wakes the other side if it sleeps; the seq_cst fence pairs with the one a
// sleeper makes between raising its flag and checking once more.
void notify(std::atomic<uint32_t>& event, std::atomic<uint32_t>& sleeping) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleeping.load(std::memory_order_relaxed)) {
    event.fetch_add(1, std::memory_order_relaxed);
    futex_wake(event);
  }
}

// Lets a hyperthread sibling (perhaps the peer we wait for) run while we spin.
void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

size_t ByteRing::readable_bytes() const {
  uint64_t head = c_->head.load(std::memory_order_acquire);
  uint64_t tail = c_->tail.load(std::memory_order_relaxed);
  if (head - tail > capacity_) throw TransportError("shared ring corrupted by the peer");
  return static_cast<size_t>(head - tail);
}

size_t ByteRing::writable_bytes() const {
  uint64_t head = c_->head.load(std::memory_order_relaxed);
  uint64_t tail = c_->tail.load(std::memory_order_acquire);
  if (head - tail > capacity_) throw TransportError("shared ring corrupted by the peer");
  return capacity_ - static_cast<size_t>(head - tail);
}

template <typename Ready>
bool ByteRing::wait(Ready ready, std::atomic<uint32_t>& event, std::atomic<uint32_t>& sleeping,
                    Clock::time_point deadline) {
  const auto start = Clock::now();
  const auto poll_until = std::min(deadline, start + poll_window());
  for (;;) {
    if (ready()) return true;
    if (c_->closed.load(std::memory_order_acquire)) throw TransportError("connection closed");
    auto now = Clock::now();
    if (now >= poll_until) break;
    // After a short spin, other runnable threads (many clients on few
    // cores) go first.
    if (now - start > kSpinBeforeYield)
      std::this_thread::yield();
    else
      spin_pause();
  }
  for (;;) {
    uint32_t seen = event.load(std::memory_order_relaxed);
    sleeping.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (ready()) break;
    if (c_->closed.load(std::memory_order_acquire)) {
      sleeping.store(0, std::memory_order_relaxed);
      throw TransportError("connection closed");
    }
    auto now = Clock::now();
    if (now >= deadline) {
      sleeping.store(0, std::memory_order_relaxed);
      return false;
    }
    futex_wait(event, seen, std::min<std::chrono::nanoseconds>(deadline - now, kLivenessPeriod));
    sleeping.store(0, std::memory_order_relaxed);
    if (ready()) return true;
    alive_();
  }
  sleeping.store(0, std::memory_order_relaxed);
  return true;
}

void ByteRing::write(const void* src, size_t n) {
  transfer(const_cast<char*>(static_cast<const char*>(src)), n, true);
}

void ByteRing::read(void* dst, size_t n) { transfer(static_cast<char*>(dst), n, false); }

void ByteRing::transfer(char* p, size_t n, bool produce) {
  std::atomic<uint64_t>& index = produce ? c_->head : c_->tail;
  auto room = [&] { return produce ? writable_bytes() : readable_bytes(); };
  while (n > 0) {
    size_t ready = room();
    if (ready == 0) {
      if (produce)
        wait([&] { return room() > 0; }, c_->space_event, c_->producer_sleeping, Clock::time_point::max());
      else
        wait([&] { return room() > 0; }, c_->data_event, c_->consumer_sleeping, Clock::time_point::max());
      continue;
    }
    uint64_t done = index.load(std::memory_order_relaxed);
    size_t at = static_cast<size_t>(done % capacity_);
    size_t chunk = std::min({n, ready, capacity_ - at});
    if (produce) {
      std::memcpy(data_ + at, p, chunk);
      index.store(done + chunk, std::memory_order_release);
      notify(c_->data_event, c_->consumer_sleeping);
    } else {
      std::memcpy(p, data_ + at, chunk);
      index.store(done + chunk, std::memory_order_release);
      notify(c_->space_event, c_->producer_sleeping);
    }
    p += chunk;
    n -= chunk;
  }
}

bool ByteRing::wait_readable(Clock::time_point deadline) {
  return wait([&] { return readable_bytes() > 0; }, c_->data_event, c_->consumer_sleeping, deadline);
}

void ByteRing::close() {
  c_->closed.store(1, std::memory_order_release);
  c_->data_event.fetch_add(1);
  c_->space_event.fetch_add(1);
  futex_wake(c_->data_event);
  futex_wake(c_->space_event);
}

}  // namespace rgpu::transport
