// The pool's shared state on one server: which jobs hold sessions on which
// GPUs, the memory each job may hold per GPU and holds now, and which jobs
// have ended. The daemon maps it before forking workers, so every worker
// (one per session) shares it: a job's sessions are separate processes, and
// its amount is one budget across them. A worker that dies leaves its
// entries behind; the daemon reaps them (session_ended).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rgpu::server {

enum class GpuMode : uint8_t { shared, exclusive };
// GPU ordinals the ledger tracks: 0 to kLedgerGpus - 1.
constexpr int kLedgerGpus = 64;
// The longest place a move may name (HOST:PORT/GPU) that the ledger keeps.
constexpr size_t kMaxMoveTarget = 255;

// A session asking to be admitted.
struct SessionClaim {
  std::string job;                // empty: a session without credential
  std::string user;
  int64_t expires = 0;            // the credential's expiry (Unix seconds)
  std::vector<int> gpus;
  std::vector<uint64_t> amounts;  // per entry of gpus; 0: no limit
  std::vector<int> shares;        // per entry of gpus: percent of SMs; 0: none given
  std::string host;               // client's address
  std::string process;            // client's program name
  uint32_t client_pid = 0;
};

// A snapshot for `rgpu smi` and the metrics.
struct LedgerSession {
  pid_t worker;
  std::string job, host, process;
  uint32_t client_pid;
  std::vector<int> gpus;
  std::string move;  // a move asked and not yet taken, or what came of the last one
};
struct LedgerJobGpu {
  std::string job;
  int gpu;
  uint64_t amount, used;
  int share;  // percent of SMs per session; 0: none given
};
struct LedgerSnapshot {
  std::vector<LedgerSession> sessions;
  std::vector<LedgerJobGpu> job_gpus;
};

class JobLedger {
 public:
  // Maps the shared region; call before forking workers.
  JobLedger();
  ~JobLedger();
  JobLedger(const JobLedger&) = delete;
  JobLedger& operator=(const JobLedger&) = delete;

  // Registers `worker`'s session; empty when admitted, else why not.
  // `modes[g]` is GPU g's mode (GPUs beyond it: shared).
  std::string admit(pid_t worker, const SessionClaim& claim, const std::vector<GpuMode>& modes);
  // Counts `bytes` more on `gpu` against the session's job; false (nothing
  // counted) when that would pass the job's amount.
  bool charge(pid_t worker, int gpu, uint64_t bytes);
  void release(pid_t worker, int gpu, uint64_t bytes);
  // The job's amount on `gpu` and what it holds there; false when the
  // session has no amount there (no limit).
  bool quota(pid_t worker, int gpu, uint64_t* amount, uint64_t* used);
  // Marks the job ended (later sessions are refused) and returns how many
  // of its sessions are open: the daemon stops their workers.
  int end_job(const std::string& job);
  bool job_ended(const std::string& job);
  // Workers serving ended jobs, for the daemon to stop.
  std::vector<pid_t> workers_of_ended_jobs();
  // The scheduler asks `worker`'s session to move to `target` (HOST:PORT/GPU);
  // its client takes the request at its next heartbeat. False when there
  // is no such session.
  bool ask_move(pid_t worker, const std::string& target);
  // The move asked of `worker`'s session, cleared as it is taken; empty: none.
  std::string take_move(pid_t worker);
  // What came of the last move asked (the client's refusal, say).
  void note_move(pid_t worker, const std::string& note);
  // The daemon reaped `worker`: its session and what it held are gone.
  void session_ended(pid_t worker);
  LedgerSnapshot snapshot();

  struct Region;

 private:
  Region* region_;
};

}  // namespace rgpu::server
