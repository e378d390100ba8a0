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
  // Whether a GPU's MPS server is lost to its clients, which must all go
  // before restart(): a worker of the GPU reported a sticky fault (NVIDIA's
  // MPS then fails every client of the GPU and takes no new one until all
  // have exited), or its control daemon does not answer (checked then and
  // every few seconds). Logs why.
  bool broken();
  // Restarts the broken daemons, once no worker is left. False when one
  // cannot start: the server must stop (its workers would be clients of no
  // MPS server).
  bool restart();
  // The pipe directory workers of `gpu` must see before CUDA starts; empty
  // when that GPU time-slices.
  std::string pipe_directory(int gpu) const;

 private:
  struct Daemon {
    int gpu;
    std::string dir, pipe_dir, log_dir;
    uint64_t faults_seen = 0;
    bool broken = false;
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
