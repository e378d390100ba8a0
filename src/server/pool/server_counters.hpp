// Counters every worker adds to and the daemon's metrics endpoint reads:
// sessions, calls and their errors by op, bytes moved over each transport
// in each direction. Shared memory mapped before the workers fork, updated
// with relaxed atomics (a scrape needs no exact instant).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "server/pool/job_ledger.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

enum class Direction : uint8_t { to_server, to_client };
enum class TransportKind : uint8_t { tcp, shm };
// How a GPU's sessions share it: time slices between their contexts, or
// kernels side by side as clients of the server's MPS daemon; a GPU whose
// MPS daemon could not start time-slices, and says so.
enum class SharingState : uint8_t { timeslice, mps, timeslice_fallback };
const char* sharing_state_name(SharingState s);

// Connections that pass descriptors are the Unix sockets shm starts on.
inline TransportKind transport_kind(const transport::Connection& c) {
  return c.passes_descriptors() ? TransportKind::shm : TransportKind::tcp;
}

class ServerCounters {
 public:
  static constexpr uint16_t kOps = 2048;  // op numbers counted one by one; higher ones share the last slot

  ServerCounters();
  ~ServerCounters();
  ServerCounters(const ServerCounters&) = delete;
  ServerCounters& operator=(const ServerCounters&) = delete;

  void session_opened() { add(region_->sessions_opened, 1); }
  void session_refused() { add(region_->sessions_refused, 1); }
  void call(uint16_t op, bool failed) {
    add(region_->calls[slot(op)], 1);
    if (failed) add(region_->errors[slot(op)], 1);
  }
  void bytes(TransportKind t, Direction d, uint64_t n) {
    add(region_->bytes[static_cast<int>(t)][static_cast<int>(d)], n);
  }
  // The daemon's: how long a worker took from fork to ready (its CUDA
  // contexts, on the GPU), and how long an accepted client waited for a
  // ready worker. Together they say how many sessions a second it can start.
  void worker_started(double seconds) { region_->worker_start.add(seconds); }
  void client_waited(double seconds) { region_->client_wait.add(seconds); }

  // The PCI bus id of GPU `gpu` ("0000:17:00.0"), which NVML knows it by:
  // workers, which load the backend, write it; the daemon, which does not,
  // reads it.
  void set_bus_id(int gpu, const std::string& id);
  std::string bus_id(int gpu) const;
  // Workers': their session's context hit a sticky fault on `gpu`. The
  // daemon's: it restarted that GPU's MPS daemon.
  void sticky_fault(int gpu) { if (gpu >= 0 && gpu < kLedgerGpus) add(region_->sticky_faults[gpu], 1); }
  void mps_restarted(int gpu) { if (gpu >= 0 && gpu < kLedgerGpus) add(region_->mps_restarts[gpu], 1); }
  uint64_t sticky_faults(int gpu) const { return per_gpu(region_->sticky_faults, gpu); }
  uint64_t mps_restarts(int gpu) const { return per_gpu(region_->mps_restarts, gpu); }
  // The daemon's, after it started (or failed to start) MPS daemons.
  void set_gpu_sharing(int gpu, SharingState s);
  SharingState gpu_sharing(int gpu) const;

  uint64_t sessions_opened() const { return region_->sessions_opened.load(std::memory_order_relaxed); }
  uint64_t sessions_refused() const { return region_->sessions_refused.load(std::memory_order_relaxed); }
  uint64_t calls(uint16_t slot) const { return region_->calls[slot].load(std::memory_order_relaxed); }
  uint64_t errors(uint16_t slot) const { return region_->errors[slot].load(std::memory_order_relaxed); }
  uint64_t bytes(TransportKind t, Direction d) const {
    return region_->bytes[static_cast<int>(t)][static_cast<int>(d)].load(std::memory_order_relaxed);
  }
  struct Durations {
    uint64_t count;
    double sum_s, max_s;
  };
  Durations worker_starts() const { return region_->worker_start.read(); }
  Durations client_waits() const { return region_->client_wait.read(); }

 private:
  // Count, sum and most of a duration, in microseconds.
  struct DurationSum {
    std::atomic<uint64_t> count, sum_us, max_us;
    void add(double seconds) {
      const auto us = static_cast<uint64_t>(seconds * 1e6);
      count.fetch_add(1, std::memory_order_relaxed);
      sum_us.fetch_add(us, std::memory_order_relaxed);
      uint64_t most = max_us.load(std::memory_order_relaxed);
      while (us > most && !max_us.compare_exchange_weak(most, us, std::memory_order_relaxed)) {
      }
    }
    Durations read() const {
      return {count.load(std::memory_order_relaxed), sum_us.load(std::memory_order_relaxed) / 1e6,
              max_us.load(std::memory_order_relaxed) / 1e6};
    }
  };
  struct Region {
    std::atomic<uint64_t> sessions_opened, sessions_refused;
    std::atomic<uint64_t> calls[kOps], errors[kOps];
    std::atomic<uint64_t> bytes[2][2];
    DurationSum worker_start, client_wait;
    char bus_ids[kLedgerGpus][16];
    std::atomic<uint8_t> gpu_sharing[kLedgerGpus];
    std::atomic<uint64_t> sticky_faults[kLedgerGpus], mps_restarts[kLedgerGpus];
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "counters shared between processes");
  static uint16_t slot(uint16_t op) { return op < kOps ? op : kOps - 1; }
  static void add(std::atomic<uint64_t>& c, uint64_t n) { c.fetch_add(n, std::memory_order_relaxed); }
  static uint64_t per_gpu(const std::atomic<uint64_t>* c, int gpu) {
    return gpu >= 0 && gpu < kLedgerGpus ? c[gpu].load(std::memory_order_relaxed) : 0;
  }

  Region* region_;
};

}  // namespace rgpu::server
