#include "client/move/content_copy.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/core/session.hpp"
#include "client/move/move_refusal.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"
#include "transport/shm/shared_memory.hpp"

namespace rgpu::client {
namespace {

// A piece is large enough that its round trips cost little beside its
// bytes; four movers keep both workers and a tcp session's connections busy.
constexpr size_t kPiece = size_t{16} << 20;
constexpr unsigned kMovers = 4;

// A side that shares memory copies between its GPU and the buffer itself.
void copy_shared(Session& s, int device, uint64_t address, void* buffer, size_t n, bool to_device) {
  proto::Writer w;
  w.put<uint64_t>(address)
      .put<uint64_t>(reinterpret_cast<uint64_t>(buffer))
      .put<uint64_t>(n)
      .put<uint8_t>(to_device)
      .put<uint64_t>(0)
      .put<uint8_t>(1)
      .put<uint8_t>(0);
  std::vector<uint8_t> reply;
  check_step(s.call(proto::kOpMemcpyShared, static_cast<uint16_t>(device), w.bytes(), {}, reply),
             to_device ? "writing device memory on the target" : "reading device memory to move");
}

// One thread's buffer, shared with whichever side shares memory, and the
// pieces it moves.
class Mover {
 public:
  Mover(Session& from, int remote, Session& to, int gpu) : from_(from), to_(to), remote_(remote), gpu_(gpu) {
    if (from.shares_memory() || to.shares_memory()) {
      shared_ = transport::create_shared_memory(kPiece);
      buffer_ = static_cast<char*>(shared_.base);
      from_shares_ = from.shares_memory() && share_with(from, remote);
      to_shares_ = to.shares_memory() && share_with(to, gpu);
    } else {
      heap_.reset(new char[kPiece]);  // not zeroed: every byte is copied over
      buffer_ = heap_.get();
    }
  }
  ~Mover() {
    if (from_shares_) unshare(from_, remote_);
    if (to_shares_) unshare(to_, gpu_);
    if (shared_.base) transport::release_shared_memory(shared_);
  }
  Mover(const Mover&) = delete;
  Mover& operator=(const Mover&) = delete;

  void move(uint64_t address, size_t n) {
    if (from_shares_)
      copy_shared(from_, remote_, address, buffer_, n, false);
    else
      read_device(from_, remote_, address, buffer_, n);
    if (to_shares_)
      copy_shared(to_, gpu_, address, buffer_, n, true);
    else
      write_device(to_, gpu_, address, buffer_, n);
  }

 private:
  // False when the worker does not take it (its page-locked memory limit):
  // the copy then goes through the connection.
  bool share_with(Session& s, int device) {
    proto::Writer w;
    w.put<uint64_t>(reinterpret_cast<uint64_t>(shared_.base)).put<uint64_t>(shared_.size);
    std::vector<uint8_t> reply;
    return s.call_with_fd(proto::kOpHostRegisterShared, static_cast<uint16_t>(device), w.bytes(), shared_.fd, reply) ==
           cudaSuccess;
  }
  void unshare(Session& s, int device) {
    proto::Writer w;
    w.put<uint64_t>(reinterpret_cast<uint64_t>(shared_.base));
    std::vector<uint8_t> reply;
    s.call(proto::kOpHostUnregisterShared, static_cast<uint16_t>(device), w.bytes(), {}, reply, false);
  }

  Session& from_;
  Session& to_;
  const int remote_, gpu_;
  transport::SharedMemory shared_;
  std::unique_ptr<char[]> heap_;
  char* buffer_ = nullptr;
  bool from_shares_ = false, to_shares_ = false;
};

}  // namespace

void read_device(Session& from, int remote, uint64_t address, void* dst, size_t n) {
  proto::Writer w;
  w.put<uint64_t>(address).put<uint64_t>(n).put<uint64_t>(0);
  std::vector<uint8_t> reply;
  check_step(from.call_into(proto::kOpMemcpyDtoH, static_cast<uint16_t>(remote), w.bytes(), dst, n, reply),
             "reading device memory to move");
}

void write_device(Session& to, int gpu, uint64_t address, const void* src, size_t n) {
  proto::Writer w;
  w.put<uint64_t>(address).put<uint64_t>(0).put<uint8_t>(1);
  iovec payload{const_cast<void*>(src), n};
  std::vector<uint8_t> reply;
  check_step(to.call(proto::kOpMemcpyHtoD, static_cast<uint16_t>(gpu), w.bytes(), {&payload, 1}, reply),
             "writing device memory on the target");
}

ContentMovers::ContentMovers(Session& from, int remote, Session& to, int gpu, std::span<const MovedRange> warm_up)
    : from_(from), to_(to), remote_(remote), gpu_(gpu) {
  for (unsigned i = 0; i < kMovers; ++i) threads_.emplace_back([this, warm_up] { serve(warm_up); });
}

ContentMovers::~ContentMovers() {
  {
    std::lock_guard lock(mutex_);
    started_ = true;  // a copy never asked for: the movers stop
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ContentMovers::failed(const std::string& why) {
  next_ = SIZE_MAX / 2;
  std::lock_guard lock(mutex_);
  if (failed_.empty()) failed_ = why;
}

void ContentMovers::serve(std::span<const MovedRange> warm_up) {
  std::unique_ptr<Mover> mover;
  try {
    mover = std::make_unique<Mover>(from_, remote_, to_, gpu_);
  } catch (const std::exception& e) {
    failed(e.what());
  }
  // The warm-up's bytes are copied again in the pause; one that fails (the
  // application freed that memory meanwhile) only warmed less.
  if (mover && !warm_up.empty()) try {
      mover->move(warm_up.front().base, std::min<uint64_t>(kPiece, warm_up.front().size));
    } catch (const std::exception&) {
    }
  {
    std::unique_lock lock(mutex_);
    ++prepared_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return started_; });
  }
  try {
    for (size_t i; mover && (i = next_++) < pieces_.size();) mover->move(pieces_[i].base, pieces_[i].size);
  } catch (const std::exception& e) {
    failed(e.what());
  }
  {
    std::lock_guard lock(mutex_);
    ++done_;
  }
  changed_.notify_all();
}

void ContentMovers::wait_ready() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return prepared_ == threads_.size(); });
  if (!failed_.empty()) throw std::runtime_error(failed_);
}

uint64_t ContentMovers::copy(std::span<const MovedRange> ranges) {
  uint64_t bytes = 0;
  std::unique_lock lock(mutex_);
  for (const MovedRange& r : ranges) {
    for (uint64_t off = 0; off < r.size; off += kPiece)
      pieces_.push_back({r.base + off, std::min<uint64_t>(kPiece, r.size - off)});
    bytes += r.size;
  }
  started_ = true;
  changed_.notify_all();
  changed_.wait(lock, [&] { return done_ == threads_.size(); });
  if (!failed_.empty()) throw std::runtime_error(failed_);
  return bytes;
}

}  // namespace rgpu::client
