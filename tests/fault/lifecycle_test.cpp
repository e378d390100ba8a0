// Servers, workers and clients that die, stop answering or come back: every
// client hears of it promptly (never hangs), only the sessions concerned
// end, and nothing is left behind. The detection times measured are
// printed ("[measured] ...").
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "client/core/session.hpp"
#include "protocol/ops.hpp"
#include "server/worker/ipc_records.hpp"
#include "test_server.hpp"

using namespace rgpu;
using namespace rgpu::test;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A malloc, a copy in and a free: a little of everything a program does.
cudaError_t some_work(client::Session& s) {
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(4096);
  if (cudaError_t e = s.call(proto::kOpMalloc, 0, m.bytes(), {}, reply)) return e;
  proto::Reader r(reply);
  uint64_t ptr = r.get<uint64_t>();
  std::vector<uint8_t> data(4096, 7);
  proto::Writer h2d;
  h2d.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
  iovec v{data.data(), data.size()};
  if (cudaError_t e = s.call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&v, 1}, reply)) return e;
  proto::Writer f;
  f.put<uint64_t>(ptr);
  return s.call(proto::kOpFree, 0, f.bytes(), {}, reply);
}

// An allocation exported for IPC: the worker leaves a record in the
// server's IPC directory (and the test backend the memory's own file) until
// it ends.
cudaError_t export_for_ipc(client::Session& s) {
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(1 << 20);
  if (cudaError_t e = s.call(proto::kOpMalloc, 0, m.bytes(), {}, reply)) return e;
  proto::Reader r(reply);
  proto::Writer w;
  w.put<uint64_t>(r.get<uint64_t>()).put<uint64_t>(1 << 20);
  return s.call(proto::kOpIpcGetMemHandle, 0, w.bytes(), {}, reply);
}

// Waits up to `seconds` for `done`; false if it never held.
template <typename F>
bool within(double seconds, F done) {
  auto t0 = Clock::now();
  while (!done()) {
    if (seconds_since(t0) > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void measured(const char* what, double seconds) {
  printf("[measured] %s: %.3f s\n", what, seconds);
  ::testing::Test::RecordProperty(what, std::to_string(seconds));
}

// The names these workers left in the IPC directory of the server on
// `port` (ipc_records.hpp: each starts with its worker's pid).
std::vector<std::string> ipc_names_of(uint16_t port, const std::set<pid_t>& workers) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(server::default_ipc_directory(port))) {
    std::string name = e.path().filename().string();
    for (pid_t w : workers)
      if (name.rfind(server::ipc_name_prefix(w), 0) == 0) names.push_back(name);
  }
  return names;
}

}  // namespace

TEST(Lifecycle, DaemonKilledWhileClientsRunFailsEveryClientWithinFiveSeconds) {
  uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2"});
  const pid_t daemon = server.pid();
  constexpr int kClients = 6;
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (int i = 0; i < kClients; ++i) sessions.push_back(open_session(port, i % 2 ? "shm" : "tcp"));
  for (auto& s : sessions) ASSERT_TRUE(s);
  std::atomic<bool> killed{false};
  Clock::time_point killed_at;
  std::vector<double> detected(kClients, -1);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      cudaError_t e;
      while ((e = some_work(*sessions[i])) == cudaSuccess) {}
      EXPECT_TRUE(killed) << "client " << i << " failed before the server was killed: " << e;
      EXPECT_EQ(e, cudaErrorDevicesUnavailable);
      detected[i] = seconds_since(killed_at);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  killed_at = Clock::now();
  killed = true;
  kill(daemon, SIGKILL);  // the daemon alone: its workers must not outlive it
  waitpid(daemon, nullptr, 0);
  for (auto& t : clients) t.join();
  double slowest = 0;
  for (double d : detected) {
    EXPECT_GE(d, 0);
    EXPECT_LT(d, 5.0);
    slowest = std::max(slowest, d);
  }
  measured("slowest client error after the daemon was killed", slowest);
}

TEST(Lifecycle, WorkerKilledFailsOnlyItsClient) {
  uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2"});
  auto victim = open_session(port, "tcp");
  auto other = open_session(port, "shm");
  ASSERT_TRUE(victim && other);
  ASSERT_EQ(some_work(*victim), cudaSuccess);
  auto t0 = Clock::now();
  kill(static_cast<pid_t>(victim->hello().worker_pid), SIGKILL);
  EXPECT_EQ(synchronize(*victim), cudaErrorDevicesUnavailable);
  double took = seconds_since(t0);
  EXPECT_LT(took, 1.0);
  measured("client error after its worker was killed", took);
  EXPECT_EQ(some_work(*other), cudaSuccess);
  auto fresh = open_session(port, "tcp");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(some_work(*fresh), cudaSuccess);
}

// A worker that stops answering without closing (SIGSTOP: its sockets stay
// open and its kernel still acknowledges, as across a network partition):
// the client's blocked call fails within the peer timeout. The worker
// stops as soon as the session is open: the client knows the server's
// timeout (shorter than its own 30 s) from the start.
TEST(Lifecycle, SilentServerIsFoundByItsClientWithinThePeerTimeout) {
  uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "1", "--peer-timeout", "2"});
  for (const char* transport : {"tcp", "shm"}) {
    SCOPED_TRACE(transport);
    auto s = open_session(port, transport);
    ASSERT_TRUE(s);
    pid_t worker = static_cast<pid_t>(s->hello().worker_pid);
    kill(worker, SIGSTOP);
    auto t0 = Clock::now();
    EXPECT_EQ(synchronize(*s), cudaErrorDevicesUnavailable);
    double took = seconds_since(t0);
    EXPECT_LT(took, 2.0 + 1.5);
    measured(transport == std::string("tcp") ? "client finds a silent server (tcp, peer-timeout 2 s)"
                                             : "client finds a silent server (shm, peer-timeout 2 s)",
             took);
    kill(worker, SIGKILL);
  }
}

// A client that stops answering without closing: its worker ends the
// session within the peer timeout, and others go on.
TEST(Lifecycle, SilentClientIsFoundByTheServerWithinThePeerTimeout) {
  uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "1", "--peer-timeout", "2"});
  auto other = open_session(port, "tcp");
  ASSERT_TRUE(other);
  for (const char* transport : {"tcp", "shm"}) {
    SCOPED_TRACE(transport);
    ClientProcess c = start_client(port, transport, "idle");
    ASSERT_GT(c.worker, 0);
    // Idle but alive, it keeps its session past the timeout.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    EXPECT_TRUE(running(c.worker));
    kill(c.pid, SIGSTOP);
    auto t0 = Clock::now();
    EXPECT_TRUE(within(10, [&] { return !running(c.worker); }));
    double took = seconds_since(t0);
    EXPECT_LT(took, 2.0 + 1.5);
    measured(transport == std::string("tcp") ? "server finds a silent client (tcp, peer-timeout 2 s)"
                                             : "server finds a silent client (shm, peer-timeout 2 s)",
             took);
    kill(c.pid, SIGKILL);
    waitpid(c.pid, nullptr, 0);
  }
  EXPECT_EQ(some_work(*other), cudaSuccess);
}

TEST(Lifecycle, RestartedDaemonServesNewSessions) {
  uint16_t port = free_port();
  std::unique_ptr<client::Session> before;
  {
    ServerProcess first(port, {"--workers", "1"});
    before = open_session(port, "tcp");
    ASSERT_TRUE(before);
    stop_server(first.pid(), SIGKILL);
  }
  EXPECT_EQ(synchronize(*before), cudaErrorDevicesUnavailable);
  ServerProcess second(port, {"--workers", "1"});
  for (const char* transport : {"tcp", "shm"}) {
    SCOPED_TRACE(transport);
    auto s = open_session(port, transport);
    ASSERT_TRUE(s);
    EXPECT_EQ(some_work(*s), cudaSuccess);
  }
}

// Workers that start slowly, one at a time (as CUDA contexts are created
// on a GPU machine): clients that leave while queued must not take the
// workers starting meanwhile, or every client behind them waits for their
// starts too. On the 2-GPU soak such queued clients (killed ones, and ones
// that had given up waiting) made the wait grow past the clients' 60 s.
TEST(Lifecycle, ClientsThatLeftWhileQueuedTakeNoWorker) {
  constexpr int kStartMs = 400, kGone = 8;
  uint16_t port = free_port();
  setenv("RGPU_HOST_TEST_START_MS", std::to_string(kStartMs).c_str(), 1);
  ServerProcess server(port, {"--workers", "0"});
  unsetenv("RGPU_HOST_TEST_START_MS");
  for (int i = 0; i < kGone; ++i) transport::make_tcp_transport()->connect({"127.0.0.1", port}, 1000);
  auto t0 = Clock::now();
  auto s = open_session(port, "tcp");
  ASSERT_TRUE(s);
  double took = seconds_since(t0);
  measured("session behind clients that left, workers starting 0.4 s one at a time", took);
  // Served by one of the first workers to start, not the (kGone + 1)th.
  EXPECT_LT(took, 3 * kStartMs / 1000.0);
  EXPECT_EQ(some_work(*s), cudaSuccess);
}

// Sessions ending every way: closed, their client killed, their worker
// killed (with IPC exports, whose names the daemon removes). Afterwards
// the daemon is back to its idle workers and its own descriptors, no
// IPC name of its workers is left, and a new session finds all of
// the (host-test) device memory free.
TEST(Lifecycle, ThousandSessionsEndingEveryWayLeaveNothingBehind) {
  uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2"});
  const pid_t daemon = server.pid();
  ASSERT_TRUE(within(10, [&] { return workers_of(daemon) == 2; }));
  {
    auto warm = open_session(port, "shm");  // the daemon's first session opens what it keeps
  }
  ASSERT_TRUE(within(10, [&] { return workers_of(daemon) == 2; }));
  const size_t fds = open_descriptors(daemon);
  std::set<pid_t> workers;
  int closed = 0, clients_killed = 0, workers_killed = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < 1000; ++i) {
    const char* transport = i % 2 ? "shm" : "tcp";
    switch (i % 10) {
      case 7: {
        ClientProcess c = start_client(port, transport, "calls");
        ASSERT_GT(c.worker, 0);
        workers.insert(c.worker);
        kill(c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
        ++clients_killed;
        break;
      }
      case 9: {
        auto s = open_session(port, transport);
        ASSERT_TRUE(s);
        ASSERT_EQ(export_for_ipc(*s), cudaSuccess);
        workers.insert(static_cast<pid_t>(s->hello().worker_pid));
        kill(static_cast<pid_t>(s->hello().worker_pid), SIGKILL);
        EXPECT_EQ(synchronize(*s), cudaErrorDevicesUnavailable);
        ++workers_killed;
        break;
      }
      default: {
        auto s = open_session(port, transport);
        ASSERT_TRUE(s);
        ASSERT_EQ(some_work(*s), cudaSuccess);
        workers.insert(static_cast<pid_t>(s->hello().worker_pid));
        if (i % 10 == 3) {
          ASSERT_EQ(export_for_ipc(*s), cudaSuccess);
        }
        ++closed;
      }
    }
  }
  measured("1000 sessions", seconds_since(t0));
  EXPECT_EQ(closed + clients_killed + workers_killed, 1000);
  EXPECT_TRUE(within(10, [&] { return workers_of(daemon) == 2; })) << workers_of(daemon) << " workers";
  EXPECT_TRUE(within(5, [&] { return open_descriptors(daemon) == fds; }))
      << open_descriptors(daemon) << " descriptors, " << fds << " before";
  EXPECT_EQ(workers.size(), 1000u);
  EXPECT_EQ(ipc_names_of(port, workers), std::vector<std::string>{});
  auto s = open_session(port, "tcp");
  ASSERT_TRUE(s);
  std::vector<uint8_t> reply;
  ASSERT_EQ(s->call(proto::kOpMemGetInfo, 0, {}, {}, reply), cudaSuccess);
  proto::Reader r(reply);
  uint64_t free = r.get<uint64_t>(), total = r.get<uint64_t>();
  EXPECT_EQ(free, total);
}

namespace {

// A daemon the test itself reaps once it stops on its own (a drained one),
// killed when the test ends first.
class DrainedDaemon {
 public:
  DrainedDaemon(uint16_t port, std::vector<std::string> flags) : port_(port), pid_(start_server(port, std::move(flags))) {}
  ~DrainedDaemon() {
    if (!reaped_) stop_server(pid_, SIGKILL);
  }
  DrainedDaemon(const DrainedDaemon&) = delete;
  DrainedDaemon& operator=(const DrainedDaemon&) = delete;
  pid_t pid() const { return pid_; }
  // Why a new session is refused once the drain has begun ("" if none was
  // within 5 s). A session admitted before the daemon saw the signal ends
  // at once.
  std::string refusal() const {
    std::string why;
    for (int i = 0; i < 50 && why.find("draining") == std::string::npos; ++i) {
      client::Session::open({"127.0.0.1", port_}, i % 2 ? "shm" : "tcp", {0}, &why).reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return why;
  }
  // Waits up to 10 s for it to exit: its wait status, or nothing.
  std::optional<int> exit_status() {
    int status = 0;
    const auto from = Clock::now();
    while (!reaped_ && seconds_since(from) < 10) {
      reaped_ = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!reaped_) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return reaped_ ? std::optional<int>(status) : std::nullopt;
  }

 private:
  uint16_t port_;
  pid_t pid_;
  bool reaped_ = false;
};

bool exited_with(std::optional<int> status, int code) {
  return status && WIFEXITED(*status) && WEXITSTATUS(*status) == code;
}

}  // namespace

// SIGUSR1 drains a server: new sessions are turned away, saying why; the
// sessions it serves go on (their new threads join them too); once they
// have ended, the daemon stops by itself.
TEST(Lifecycle, DrainedServerTurnsNewSessionsAwayLetsServingOnesFinishThenStops) {
  const uint16_t port = free_port();
  DrainedDaemon daemon(port, {"--workers", "2"});
  auto tcp = open_session(port, "tcp");
  auto shm = open_session(port, "shm");
  ASSERT_TRUE(tcp && shm);
  ASSERT_EQ(kill(daemon.pid(), SIGUSR1), 0);
  const std::string why = daemon.refusal();
  EXPECT_NE(why.find("this server is draining"), std::string::npos) << why;
  EXPECT_EQ(some_work(*tcp), cudaSuccess);
  EXPECT_EQ(some_work(*shm), cudaSuccess);
  cudaError_t from_new_thread = cudaErrorUnknown;
  std::thread([&] { from_new_thread = some_work(*tcp); }).join();
  EXPECT_EQ(from_new_thread, cudaSuccess);
  EXPECT_TRUE(running(daemon.pid()));
  tcp.reset();
  shm.reset();
  const auto ended = Clock::now();
  EXPECT_TRUE(exited_with(daemon.exit_status(), 0)) << "the drained daemon did not stop, with status 0, within 10 s";
  measured("drained daemon stopped after its last session ended (s)", seconds_since(ended));
}

// `rgpu-server --drain --port N` finds the daemon on that port, drains it
// and waits until it has stopped; with none there it says so.
TEST(Lifecycle, DrainCommandWaitsForTheDrainedServerToStop) {
  const uint16_t port = free_port();
  auto drain_command = [&] {
    const pid_t pid = fork();
    if (pid == 0) {
      if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
      const std::string p = std::to_string(port);
      execl(server_binary(), server_binary(), "--drain", "--port", p.c_str(), nullptr);
      _exit(127);
    }
    return pid;
  };
  int status = 0;
  ASSERT_GT(waitpid(drain_command(), &status, 0), 0);
  EXPECT_TRUE(exited_with(status, 1)) << "with no server on the port: " << status;

  DrainedDaemon daemon(port, {"--workers", "1"});
  auto session = open_session(port, "tcp");
  ASSERT_TRUE(session);
  const pid_t command = drain_command();
  const std::string why = daemon.refusal();
  EXPECT_NE(why.find("this server is draining"), std::string::npos) << why;
  EXPECT_EQ(some_work(*session), cudaSuccess);
  EXPECT_EQ(waitpid(command, &status, WNOHANG), 0) << "the command must wait while a session is served";
  session.reset();
  // The daemon is this test's child: the command sees it stop once it is reaped.
  EXPECT_TRUE(exited_with(daemon.exit_status(), 0));
  ASSERT_EQ(waitpid(command, &status, 0), command);
  EXPECT_TRUE(exited_with(status, 0)) << status;
}
