// The MPS control daemons rgpu-server runs itself, one for each shared GPU
// with --gpu-sharing mps, so that the CUDA contexts of that GPU's workers run
// their kernels side by side instead of time-slicing. Each has private pipe
// and log directories (mode 0700) under the server's MPS directory; nothing
// outside them changes (the GPU's compute mode stays as it is).
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "server/daemon/server_config.hpp"
#include "server/pool/server_counters.hpp"

namespace rgpu::server {

class MpsDaemons {
 public:
  MpsDaemons(const ServerConfig& config, ServerCounters& counters);
  // Stops the daemons and removes their directories.
  ~MpsDaemons();
  MpsDaemons(const MpsDaemons&) = delete;
  MpsDaemons& operator=(const MpsDaemons&) = delete;

  // Starts a daemon for each shared GPU, after stopping what a crashed
  // server left in the same directories. A GPU whose daemon cannot start
  // falls back to time slicing (logged, and shown in the metrics).
  void start();
  // Checks each daemon when a worker of its GPU reported a sticky fault,
  // and every few seconds; restarts one that does not answer. After a
  // restart its clients, every worker, must go; when one cannot restart the
  // server must stop (its workers would be clients of no MPS server).
  enum class Health { fine, restarted, failed };
  Health watch();
  // The pipe directory workers of `gpu` must see before CUDA starts; empty
  // when that GPU time-slices.
  std::string pipe_directory(int gpu) const;

 private:
  struct Daemon {
    int gpu;
    std::string dir, pipe_dir, log_dir;
    uint64_t faults_seen = 0;
  };
  // Runs the control program for `d` with `args`, `input` on its stdin;
  // returns its exit status (-1: it did not finish in time) and its output.
  int control(const Daemon& d, const std::vector<std::string>& args, const std::string& input,
              std::string* output) const;
  bool start_one(const Daemon& d, std::string* why);
  void stop_one(const Daemon& d);

  const ServerConfig& config_;
  ServerCounters& counters_;
  std::vector<Daemon> running_;
  std::chrono::steady_clock::time_point next_check_{};
};

}  // namespace rgpu::server
