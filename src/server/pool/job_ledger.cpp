#include "server/pool/job_ledger.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>
#include <stdexcept>

namespace rgpu::server {
namespace {

constexpr int kJobs = 256;
constexpr int kSessions = 1024;
constexpr int64_t kEndedWithoutExpiry = 24 * 3600;  // how long an ended job unseen so far stays refused

template <size_t N>
void put(char (&dst)[N], const std::string& s) {
  size_t n = std::min(s.size(), N - 1);
  std::memcpy(dst, s.data(), n);
  dst[n] = 0;
}

int64_t now() { return time(nullptr); }

}  // namespace

struct JobLedger::Region {
  struct Job {
    bool in_use;
    bool ended;
    char id[64];
    char user[64];
    int64_t expires;
    uint64_t amount[kLedgerGpus];  // 0: no limit
    uint64_t used[kLedgerGpus];
    uint8_t share[kLedgerGpus];  // 0: none given
  };
  struct Session {
    pid_t worker;  // 0: free slot
    int job;       // index in jobs, -1: no job (no credential)
    uint64_t gpus;  // bit mask
    uint64_t charged[kLedgerGpus];
    uint32_t client_pid;
    char host[64];
    char process[64];
    char move_to[kMaxMoveTarget + 1];  // a move asked by the scheduler, until the session's worker takes it
    char move_note[256];               // what came of the last move asked (a refusal's reason)
  };
  pthread_mutex_t mutex;
  Job jobs[kJobs];
  Session sessions[kSessions];

  int find_job(const std::string& id) {
    for (int i = 0; i < kJobs; ++i)
      if (jobs[i].in_use && id == jobs[i].id) return i;
    return -1;
  }
  Session* find_session(pid_t worker) {
    for (auto& s : sessions)
      if (s.worker == worker) return &s;
    return nullptr;
  }
  bool job_has_sessions(int j) {
    return std::any_of(std::begin(sessions), std::end(sessions),
                       [&](const Session& s) { return s.worker && s.job == j; });
  }
  // A free job slot: unused, or one no session needs any more (an ended
  // job's stays while its credentials could still be presented).
  int free_job_slot() {
    int64_t t = now();
    for (int i = 0; i < kJobs; ++i)
      if (!jobs[i].in_use || (!job_has_sessions(i) && (!jobs[i].ended || jobs[i].expires < t))) return i;
    // Full of ended jobs: forget the one that expires first.
    int oldest = -1;
    for (int i = 0; i < kJobs; ++i)
      if (!job_has_sessions(i) && (oldest < 0 || jobs[i].expires < jobs[oldest].expires)) oldest = i;
    return oldest;
  }
};

namespace {
// The ledger's lock; a worker that died holding it left the ledger as it
// was at some step of an update, each of which leaves it consistent.
class Locked {
 public:
  explicit Locked(pthread_mutex_t* m) : m_(m) {
    if (pthread_mutex_lock(m_) == EOWNERDEAD) pthread_mutex_consistent(m_);
  }
  ~Locked() { pthread_mutex_unlock(m_); }

 private:
  pthread_mutex_t* m_;
};
}  // namespace

JobLedger::JobLedger() {
  void* p = mmap(nullptr, sizeof(Region), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("cannot map the job ledger: ") + strerror(errno));
  region_ = new (p) Region{};
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&region_->mutex, &a);
  pthread_mutexattr_destroy(&a);
}

JobLedger::~JobLedger() { munmap(region_, sizeof(Region)); }

std::string JobLedger::admit(pid_t worker, const SessionClaim& claim, const std::vector<GpuMode>& modes) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  for (int g : claim.gpus)
    if (g < 0 || g >= kLedgerGpus) return "GPU " + std::to_string(g) + " is beyond the ledger's " + std::to_string(kLedgerGpus);
  int job = claim.job.empty() ? -1 : r.find_job(claim.job);
  if (job >= 0 && r.jobs[job].ended) return "job " + claim.job + " has ended";
  // Exclusive GPUs: only sessions of one job (a session without a job is
  // a job of its own).
  for (int g : claim.gpus) {
    if (g >= static_cast<int>(modes.size()) || modes[g] != GpuMode::exclusive) continue;
    for (const auto& s : r.sessions) {
      if (!s.worker || !(s.gpus >> g & 1) || (job >= 0 && s.job == job)) continue;
      std::string holder = s.job >= 0 ? "job " + std::string(r.jobs[s.job].id) : "a session without job";
      return "GPU " + std::to_string(g) + " is held exclusively by " + holder;
    }
  }
  Region::Session* slot = r.find_session(0);
  if (!slot) return "this server serves its most sessions already";
  if (!claim.job.empty() && job < 0) {
    job = r.free_job_slot();
    if (job < 0) return "this server tracks its most jobs already";
    auto& j = r.jobs[job];
    j = Region::Job{};
    j.in_use = true;
    put(j.id, claim.job);
  }
  if (job >= 0) {
    // The latest credential's amounts and expiry hold for the whole job.
    auto& j = r.jobs[job];
    put(j.user, claim.user);
    j.expires = claim.expires;
    for (size_t i = 0; i < claim.gpus.size(); ++i) {
      j.amount[claim.gpus[i]] = claim.amounts[i];
      j.share[claim.gpus[i]] = static_cast<uint8_t>(i < claim.shares.size() ? claim.shares[i] : 0);
    }
  }
  *slot = Region::Session{};
  slot->worker = worker;
  slot->job = job;
  for (int g : claim.gpus) slot->gpus |= 1ull << g;
  slot->client_pid = claim.client_pid;
  put(slot->host, claim.host);
  put(slot->process, claim.process);
  return "";
}

bool JobLedger::charge(pid_t worker, int gpu, uint64_t bytes) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  Region::Session* s = r.find_session(worker);
  if (!s || gpu < 0 || gpu >= kLedgerGpus) return true;
  if (s->job >= 0) {
    auto& j = r.jobs[s->job];
    if (j.amount[gpu] && (bytes > j.amount[gpu] || j.used[gpu] > j.amount[gpu] - bytes)) return false;
    j.used[gpu] += bytes;
  }
  s->charged[gpu] += bytes;
  return true;
}

void JobLedger::release(pid_t worker, int gpu, uint64_t bytes) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  Region::Session* s = r.find_session(worker);
  if (!s || gpu < 0 || gpu >= kLedgerGpus) return;
  bytes = std::min(bytes, s->charged[gpu]);
  s->charged[gpu] -= bytes;
  if (s->job >= 0) r.jobs[s->job].used[gpu] -= std::min(bytes, r.jobs[s->job].used[gpu]);
}

bool JobLedger::quota(pid_t worker, int gpu, uint64_t* amount, uint64_t* used) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  Region::Session* s = r.find_session(worker);
  if (!s || s->job < 0 || gpu < 0 || gpu >= kLedgerGpus || !r.jobs[s->job].amount[gpu]) return false;
  *amount = r.jobs[s->job].amount[gpu];
  *used = r.jobs[s->job].used[gpu];
  return true;
}

int JobLedger::end_job(const std::string& id) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  int job = r.find_job(id);
  if (job < 0) {
    job = r.free_job_slot();
    if (job < 0) return 0;
    r.jobs[job] = Region::Job{};
    r.jobs[job].in_use = true;
    put(r.jobs[job].id, id);
    r.jobs[job].expires = now() + kEndedWithoutExpiry;
  }
  r.jobs[job].ended = true;
  return static_cast<int>(std::count_if(std::begin(r.sessions), std::end(r.sessions),
                                        [&](const Region::Session& s) { return s.worker && s.job == job; }));
}

bool JobLedger::job_ended(const std::string& id) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  int job = r.find_job(id);
  return job >= 0 && r.jobs[job].ended;
}

std::vector<pid_t> JobLedger::workers_of_ended_jobs() {
  Region& r = *region_;
  Locked lock(&r.mutex);
  std::vector<pid_t> out;
  for (const auto& s : r.sessions)
    if (s.worker && s.job >= 0 && r.jobs[s.job].ended) out.push_back(s.worker);
  return out;
}

void JobLedger::session_ended(pid_t worker) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  Region::Session* s = r.find_session(worker);
  if (!s) return;
  if (s->job >= 0) {
    auto& j = r.jobs[s->job];
    for (int g = 0; g < kLedgerGpus; ++g) j.used[g] -= std::min(s->charged[g], j.used[g]);
    int job = s->job;
    s->worker = 0;
    if (!j.ended && !r.job_has_sessions(job)) j.in_use = false;
  }
  *s = Region::Session{};
}

bool JobLedger::ask_move(pid_t worker, const std::string& target) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  Region::Session* s = worker > 0 ? r.find_session(worker) : nullptr;
  if (!s) return false;
  put(s->move_to, target);
  put(s->move_note, "");
  return true;
}

std::string JobLedger::take_move(pid_t worker) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  Region::Session* s = r.find_session(worker);
  if (!s || !*s->move_to) return "";
  std::string target = s->move_to;
  put(s->move_to, "");
  return target;
}

void JobLedger::note_move(pid_t worker, const std::string& note) {
  Region& r = *region_;
  Locked lock(&r.mutex);
  if (Region::Session* s = r.find_session(worker)) put(s->move_note, note);
}

LedgerSnapshot JobLedger::snapshot() {
  Region& r = *region_;
  Locked lock(&r.mutex);
  LedgerSnapshot out;
  for (const auto& s : r.sessions) {
    if (!s.worker) continue;
    LedgerSession ls{s.worker, s.job >= 0 ? r.jobs[s.job].id : "", s.host, s.process, s.client_pid, {},
                     *s.move_to ? std::string("asked: to ") + s.move_to : s.move_note};
    for (int g = 0; g < kLedgerGpus; ++g)
      if (s.gpus >> g & 1) ls.gpus.push_back(g);
    out.sessions.push_back(std::move(ls));
  }
  for (int i = 0; i < kJobs; ++i) {
    const auto& j = r.jobs[i];
    if (!j.in_use || j.ended) continue;
    for (int g = 0; g < kLedgerGpus; ++g)
      if (j.amount[g] || j.used[g] || j.share[g]) out.job_gpus.push_back({j.id, g, j.amount[g], j.used[g], j.share[g]});
  }
  return out;
}

}  // namespace rgpu::server
