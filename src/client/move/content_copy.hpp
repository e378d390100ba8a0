// A moving session's device memory copied from its old worker to its new
// one, at the same addresses (docs/migration.md). The bytes cross this
// process: no worker reaches another. Several threads each move pieces,
// each on its own connections, so one's read from the old worker overlaps
// another's write to the new and a tcp session moves as fast as a striped
// copy. A side that shares memory with this process (shm) copies by its
// GPU's own DMA into or out of a buffer it maps, nothing on its socket.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace rgpu::client {

class Session;

struct MovedRange {
  uint64_t base;
  uint64_t size;
  bool operator==(const MovedRange&) const = default;
};

// The movers, made ready before the session's calls stop: their threads,
// buffers, connections, and the workers' staging for them (each moves
// `warm_up`, memory both workers have, once), so the pause holds the copy
// alone. Destroyed after the pause: the movers let go of their buffers then.
class ContentMovers {
 public:
  ContentMovers(Session& from, int remote, Session& to, int gpu, std::span<const MovedRange> warm_up);
  ~ContentMovers();
  ContentMovers(const ContentMovers&) = delete;
  ContentMovers& operator=(const ContentMovers&) = delete;

  // Returns once every mover is ready; throws std::runtime_error when one
  // could not be made, before any pause.
  void wait_ready();
  // Copies every range from `from` to `to`; the bytes copied. Once only.
  // Throws std::runtime_error, saying what failed.
  uint64_t copy(std::span<const MovedRange> ranges);

 private:
  void serve(std::span<const MovedRange> warm_up);
  void failed(const std::string& why);

  Session& from_;
  Session& to_;
  const int remote_, gpu_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<MovedRange> pieces_;
  bool started_ = false;
  std::atomic<size_t> next_{0};
  unsigned prepared_ = 0, done_ = 0;
  std::string failed_;  // the first mover's error
  std::vector<std::thread> threads_;
};

// One read or write of device memory through a session's connection.
void read_device(Session& from, int remote, uint64_t address, void* dst, size_t n);
void write_device(Session& to, int gpu, uint64_t address, const void* src, size_t n);

}  // namespace rgpu::client
