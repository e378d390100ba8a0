// Every byte and object a request makes the server hold is bounded (issue
// 22, D6 and the count limits), secrets' files must be their owner's alone,
// and the metrics endpoint survives idle connections. Raw sessions speak the
// wire directly, as a hostile client would.
#include <gtest/gtest.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/core/session.hpp"
#include "fatbin/fatbin_hash.hpp"
#include "protocol/codec.hpp"
#include "protocol/credential.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/graph_node.hpp"
#include "protocol/ops.hpp"
#include "test_server.hpp"

using namespace rgpu;
using namespace rgpu::test;
namespace fs = std::filesystem;

namespace {

// A server with one worker and `flags`, its log in a file of its own.
class Bounded {
 public:
  explicit Bounded(std::vector<std::string> flags, std::string log = "") : port_(free_port()), log_(std::move(log)) {
    flags.insert(flags.end(), {"--workers", "1"});
    pid_ = start_server(port_, flags, log_);
  }
  ~Bounded() { stop_server(pid_); }
  Bounded(const Bounded&) = delete;
  Bounded& operator=(const Bounded&) = delete;
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  uint16_t port_;
  std::string log_;
  pid_t pid_;
};

struct Reply {
  int32_t status;
  std::vector<uint8_t> out;  // the reply's outputs
};

// Sends one call on a raw session and reads its reply.
Reply call(transport::Connection& c, uint16_t op, const proto::Writer& args, std::span<const iovec> payload = {}) {
  Reply r;
  r.status = raw_call(c, op, args, &r.out, payload);
  return r;
}

int32_t synchronize(transport::Connection& c) { return raw_call(c, proto::kOpDeviceSynchronize, {}); }

// A PTX image the host-test backend loads, `bytes` long, made different
// from others by `tag`.
std::vector<uint8_t> ptx_image(size_t bytes, int tag) {
  std::string text = ".version 7.0\n.target sm_50\n.address_size 64\n// image " + std::to_string(tag) + "\n";
  text.resize(std::max(bytes, text.size() + 2), ' ');
  text.back() = '\n';
  return {text.begin(), text.end()};
}

// cuModuleLoadData's wire form, the image sent along: the reply's status.
int32_t load_image(transport::Connection& c, std::span<const iovec> image) {
  proto::Writer w;
  w.put_string("0").put<uint8_t>(1);
  return call(c, proto::kOpModuleLoadImage, w, image).status;
}

int32_t load_image(transport::Connection& c, const std::vector<uint8_t>& image) {
  iovec v{const_cast<uint8_t*>(image.data()), image.size()};
  return load_image(c, {&v, 1});
}

// `total` bytes of garbage as a payload: one 1 MiB block sent again and again.
struct Garbage {
  explicit Garbage(size_t total) : block(1 << 20, 0x5a) {
    for (size_t left = total; left; left -= std::min(left, block.size()))
      parts.push_back({block.data(), std::min(left, block.size())});
  }
  std::vector<uint8_t> block;
  std::vector<iovec> parts;
};

// A /proc/PID/status field, in kB.
uint64_t status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  return 0;
}

// A fresh directory for one test.
std::string fresh_dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/rgpu-bounds-" + name + "-" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() || e.is_symlink();
  return n;
}

uint64_t bytes_in(const std::string& dir) {
  uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

size_t occurrences(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

// D6: a 200 MB image (the issue used 512 MB) against 64M of host memory is
// refused before the worker holds it; the session goes on.
TEST(ResourceBounds, ModuleImagePastSessionHostMemoryIsRefusedAndTheWorkerStaysSmall) {
  Bounded server({"--max-frame-bytes", "64K", "--max-session-host-memory", "64M"});
  proto::HelloReply hello;
  auto c = open_raw_session(server.port(), &hello);
  ASSERT_EQ(hello.status, cudaSuccess) << hello.message;
  const uint64_t before_kb = status_kb(hello.worker_pid, "VmHWM");
  Garbage image(200 << 20);
  EXPECT_EQ(load_image(*c, image.parts), cudaErrorMemoryAllocation);
  // JIT link inputs are held whole too.
  proto::Writer link;
  link.put<uint32_t>(1).put<int32_t>(CU_JIT_INPUT_PTX).put_string("big.ptx").put<uint64_t>(200 << 20);
  EXPECT_EQ(call(*c, proto::kOpLink, link, image.parts).status, cudaErrorMemoryAllocation);
  EXPECT_EQ(synchronize(*c), cudaSuccess);
  const uint64_t peak_kb = status_kb(hello.worker_pid, "VmHWM");
  EXPECT_LT(peak_kb, before_kb + (64 << 10)) << "worker peak " << peak_kb << " kB, " << before_kb << " kB before";
}

// An image within host memory but past --max-module-bytes is refused; one
// within it loads.
TEST(ResourceBounds, ModuleImagePastMaxModuleBytesIsRefused) {
  Bounded server({"--max-module-bytes", "1M"});
  auto c = open_raw_session(server.port());
  EXPECT_EQ(load_image(*c, ptx_image(2 << 20, 1)), cudaErrorMemoryAllocation);
  EXPECT_EQ(load_image(*c, ptx_image(512 << 10, 2)), cudaSuccess);
}

// D6: images the backend cannot load are never written to the module cache;
// one it loads is, 0600 in a directory the server made 0700.
TEST(ResourceBounds, InvalidImagesNeverReachTheModuleCache) {
  std::string dir = fresh_dir("invalid") + "/cache";
  Bounded server({"--module-cache", dir});
  auto c = open_raw_session(server.port());
  Garbage garbage(4 << 20);
  for (int i = 0; i < 3; ++i) EXPECT_NE(load_image(*c, garbage.parts), cudaSuccess);
  ASSERT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(files_in(dir), 0u);
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  EXPECT_EQ(load_image(*c, ptx_image(4096, 1)), cudaSuccess);
  ASSERT_EQ(files_in(dir), 1u);
  for (const auto& e : fs::directory_iterator(dir)) {
    ASSERT_EQ(stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << e.path();
  }
}

// A cache directory others may write to (or a link to one) is not used.
TEST(ResourceBounds, ModuleCacheInADirectoryOthersMayWriteIsOff) {
  std::string base = fresh_dir("shared");
  std::string open_dir = base + "/open", real = base + "/real", link = base + "/link";
  fs::create_directories(open_dir);
  fs::create_directories(real);
  chmod(open_dir.c_str(), 0777);
  chmod(real.c_str(), 0700);
  fs::create_directory_symlink(real, link);
  for (const std::string& dir : {open_dir, link}) {
    SCOPED_TRACE(dir);
    Bounded server({"--module-cache", dir});
    auto c = open_raw_session(server.port());
    EXPECT_EQ(load_image(*c, ptx_image(4096, 7)), cudaSuccess);
  }
  EXPECT_EQ(files_in(open_dir), 0u);
  EXPECT_EQ(files_in(real), 0u);
}

// A link planted where the cache writes its temporary file is not followed.
TEST(ResourceBounds, ModuleCacheDoesNotFollowALinkAtItsTempName) {
  std::string base = fresh_dir("planted");
  std::string dir = base + "/cache", victim = base + "/victim";
  fs::create_directories(dir);
  chmod(dir.c_str(), 0700);
  std::ofstream(victim) << "precious\n";
  Bounded server({"--module-cache", dir});
  proto::HelloReply hello;
  auto c = open_raw_session(server.port(), &hello);
  ASSERT_EQ(hello.status, cudaSuccess) << hello.message;
  auto image = ptx_image(4096, 3);
  std::string hash = fatbin::fatbin_hash({reinterpret_cast<const std::byte*>(image.data()), image.size()});
  // The names this worker would write through: today's, and before it the
  // one without a serial number.
  std::string tmp = dir + "/" + hash + ".fatbin.tmp." + std::to_string(hello.worker_pid);
  for (const std::string& name : {tmp, tmp + ".0"}) fs::create_symlink(victim, name);
  EXPECT_EQ(load_image(*c, image), cudaSuccess);
  std::ifstream in(victim);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "precious");
  EXPECT_EQ(fs::file_size(victim), 9u);
}

// The cache's quota holds: past it the oldest entries go.
TEST(ResourceBounds, ModuleCacheStaysWithinItsQuota) {
  std::string dir = fresh_dir("quota") + "/cache";
  Bounded server({"--module-cache", dir, "--module-cache-max", "3M"});
  auto c = open_raw_session(server.port());
  std::vector<uint8_t> last;
  for (int i = 0; i < 6; ++i) {
    last = ptx_image(1 << 20, 100 + i);
    EXPECT_EQ(load_image(*c, last), cudaSuccess);
    EXPECT_LE(bytes_in(dir), 3u << 20);
  }
  std::string hash = fatbin::fatbin_hash({reinterpret_cast<const std::byte*>(last.data()), last.size()});
  EXPECT_TRUE(fs::exists(dir + "/" + hash + ".fatbin")) << "the newest image went";
}

// Each count limit refuses past it with out-of-memory, logs once, and the
// session goes on (a freed place is taken again).
TEST(ResourceBounds, CountLimitsRefusePastTheirLimitAndTheSessionGoesOn) {
  std::string log = fresh_dir("counts") + "/server.log";
  Bounded server({"--max-session-streams", "1000", "--max-session-events", "1000", "--max-session-modules", "10",
                  "--max-session-graphs", "10", "--max-session-graph-nodes", "20", "--max-session-allocations", "100",
                  "--max-session-objects", "5"},
                 log);
  auto c = open_raw_session(server.port());
  // Makes `tries` objects with `make`; returns how many were made and the
  // handle of the last one.
  auto fill = [&](int tries, uint16_t op, const proto::Writer& args, uint64_t* last) {
    int made = 0;
    for (int i = 0; i < tries; ++i) {
      Reply r = call(*c, op, args);
      if (r.status == cudaSuccess) {
        ++made;
        if (r.out.size() >= 8) std::memcpy(last, r.out.data(), 8);
      } else {
        EXPECT_EQ(r.status, cudaErrorMemoryAllocation);
      }
    }
    return made;
  };
  uint64_t stream = 0, event = 0, graph = 0, ptr = 0;
  proto::Writer stream_args;
  stream_args.put<uint32_t>(0).put<int32_t>(0);
  EXPECT_EQ(fill(1100, proto::kOpStreamCreate, stream_args, &stream), 1000);
  proto::Writer destroy;
  destroy.put<uint64_t>(stream);
  EXPECT_EQ(call(*c, proto::kOpStreamDestroy, destroy).status, cudaSuccess);
  EXPECT_EQ(fill(2, proto::kOpStreamCreate, stream_args, &stream), 1);

  // Events come in batches: one that meets the bound makes what fits.
  proto::Writer event_args, event_batch;
  event_args.put<uint32_t>(0).put<uint32_t>(1);
  event_batch.put<uint32_t>(0).put<uint32_t>(8);
  EXPECT_EQ(fill(995, proto::kOpEventCreate, event_args, &event), 995);
  Reply batch = call(*c, proto::kOpEventCreate, event_batch);
  ASSERT_EQ(batch.status, cudaSuccess);
  EXPECT_EQ(proto::Reader(batch.out).get<uint32_t>(), 5u);
  EXPECT_EQ(batch.out.size(), 4u + 5 * 8);
  EXPECT_EQ(call(*c, proto::kOpEventCreate, event_batch).status, cudaErrorMemoryAllocation);
  for (uint32_t count : {0u, proto::kMaxEventBatch + 1}) {
    proto::Writer bad;
    bad.put<uint32_t>(0).put<uint32_t>(count);
    EXPECT_EQ(call(*c, proto::kOpEventCreate, bad).status, cudaErrorInvalidValue) << count;
  }

  int modules = 0;
  for (int i = 0; i < 12; ++i) modules += load_image(*c, ptx_image(256, i)) == cudaSuccess;
  EXPECT_EQ(modules, 10);

  proto::Writer graph_args;
  graph_args.put<uint32_t>(0);
  EXPECT_EQ(fill(12, proto::kOpGraphCreate, graph_args, &graph), 10);
  proto::Writer instantiate;
  instantiate.put<uint64_t>(graph).put<uint64_t>(0);
  uint64_t exec = 0;
  EXPECT_EQ(fill(12, proto::kOpGraphInstantiate, instantiate, &exec), 10);
  proto::Writer empty_node;
  empty_node.put<uint64_t>(graph).put<uint32_t>(0);
  proto::put_node(empty_node, proto::GraphNodeParams{});
  uint64_t node = 0;
  EXPECT_EQ(fill(25, proto::kOpGraphAddNode, empty_node, &node), 20);

  uint64_t texref = 0;
  EXPECT_EQ(fill(7, proto::kOpTexRefCreate, {}, &texref), 5);

  proto::Writer malloc_args;
  malloc_args.put<uint64_t>(4096);
  EXPECT_EQ(fill(110, proto::kOpMalloc, malloc_args, &ptr), 100);
  proto::Writer free_args;
  free_args.put<uint64_t>(ptr);
  EXPECT_EQ(call(*c, proto::kOpFree, free_args).status, cudaSuccess);
  EXPECT_EQ(fill(2, proto::kOpMalloc, malloc_args, &ptr), 1);

  EXPECT_EQ(synchronize(*c), cudaSuccess);
  // Once per kind, not once per refusal.
  for (const char* setting : {"max-session-streams", "max-session-events", "max-session-modules",
                              "max-session-graph-nodes", "max-session-objects", "max-session-allocations"})
    EXPECT_EQ(occurrences(log, std::string(setting) + " "), 1u) << setting;
  EXPECT_EQ(occurrences(log, "max-session-graphs "), 2u);  // graphs, executable graphs
}

// 1-byte allocations count as the GPU holds them: 512 bytes each.
TEST(ResourceBounds, SmallAllocationsCountAtTheAllocationGranularity) {
  Bounded server({"--max-session-memory", "4M"});
  auto c = open_raw_session(server.port());
  proto::Writer one;
  one.put<uint64_t>(1);
  int made = 0;
  for (int i = 0; i < 10000; ++i) made += call(*c, proto::kOpMalloc, one).status == cudaSuccess;
  EXPECT_EQ(made, (4 << 20) / 512);
  EXPECT_EQ(synchronize(*c), cudaSuccess);
}

// A token file its group or others may read is refused, by the server (it
// does not start) and by a client (with a message that says how to fix it).
TEST(ResourceBounds, TokenFileReadableByOthersIsRefused) {
  std::string dir = fresh_dir("token");
  std::string open_token = dir + "/open-token", token = dir + "/token";
  std::ofstream(open_token) << "s3cret-token\n";
  std::ofstream(token) << "s3cret-token\n";
  chmod(open_token.c_str(), 0644);
  chmod(token.c_str(), 0600);

  const uint16_t port = free_port();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (!freopen("/dev/null", "w", stderr)) _exit(126);
    const char* bin = server_binary();
    std::string p = std::to_string(port);
    execl(bin, bin, "--backend", "host-test", "--listen", "127.0.0.1", "--port", p.c_str(), "--workers", "1",
          "--token-file", open_token.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 100 && !exited; ++i) {
    exited = waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited) stop_server(pid);
  ASSERT_TRUE(exited) << "the server started with a token file of mode 644";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 127);

  ServerProcess server(port, {"--workers", "1", "--token-file", token});
  setenv("RGPU_TOKEN_FILE", open_token.c_str(), 1);
  std::string why;
  EXPECT_FALSE(client::Session::open({"127.0.0.1", port}, "tcp", {0}, &why));
  EXPECT_NE(why.find("chmod 600"), std::string::npos) << why;
  setenv("RGPU_TOKEN_FILE", token.c_str(), 1);
  EXPECT_TRUE(client::Session::open({"127.0.0.1", port}, "tcp", {0}, &why)) << why;
  unsetenv("RGPU_TOKEN_FILE");
}

// A job credential is a secret like a token: a client refuses one whose
// file (RGPU_CREDENTIAL_FILE) its group or others may read.
TEST(ResourceBounds, CredentialFileReadableByOthersIsRefused) {
  std::string dir = fresh_dir("credential");
  const std::string key = dir + "/job.key", open_credential = dir + "/open-credential", credential = dir + "/credential";
  std::ofstream(key) << "job-key-for-the-test\n";
  chmod(key.c_str(), 0600);
  const uint16_t port = free_port();
  proto::CredentialClaims claims;
  claims.job = "42";
  claims.user = "tester";
  claims.expires = static_cast<int64_t>(time(nullptr)) + 600;
  claims.gpus = {{"127.0.0.1", port, 0, 0}};
  const std::string line = proto::issue_credential("job-key-for-the-test", claims);
  std::ofstream(open_credential) << line << "\n";
  std::ofstream(credential) << line << "\n";
  chmod(open_credential.c_str(), 0644);
  chmod(credential.c_str(), 0600);

  ServerProcess server(port, {"--workers", "1", "--job-key-file", key});
  std::string why;
  setenv("RGPU_CREDENTIAL_FILE", open_credential.c_str(), 1);
  EXPECT_FALSE(client::Session::open({"127.0.0.1", port}, "tcp", {0}, &why));
  EXPECT_NE(why.find("chmod 600"), std::string::npos) << why;
  setenv("RGPU_CREDENTIAL_FILE", credential.c_str(), 1);
  EXPECT_TRUE(client::Session::open({"127.0.0.1", port}, "tcp", {0}, &why)) << why;
  unsetenv("RGPU_CREDENTIAL_FILE");
}

namespace {

int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// GET /metrics with `headers`; the response's status line, or "" when none
// came within `timeout_ms`.
std::string scrape(uint16_t port, const std::string& headers, int timeout_ms) {
  int fd = connect_to(port);
  if (fd < 0) return "";
  std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers + "\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string response;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (response.find("\r\n") == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return response.substr(0, response.find("\r\n"));
}

// A metrics endpoint answering on `port` (it starts after the daemon).
bool metrics_up(uint16_t port) {
  for (int i = 0; i < 50; ++i) {
    if (!scrape(port, "", 1000).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

// 200 connections that send nothing do not stall a scrape.
TEST(ResourceBounds, MetricsAnswerWhileIdleConnectionsAreOpen) {
  constexpr int kIdle = 200;
  const uint16_t metrics = free_port();
  Bounded server({"--metrics-port", std::to_string(metrics)});
  ASSERT_TRUE(metrics_up(metrics));
  std::vector<int> idle;
  for (int i = 0; i < kIdle; ++i)
    if (int fd = connect_to(metrics); fd >= 0) idle.push_back(fd);
  EXPECT_EQ(idle.size(), static_cast<size_t>(kIdle));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all taken in by the endpoint
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(scrape(metrics, "", 3000).find("200"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  for (int fd : idle) close(fd);
}

// With --metrics-token-file a scrape must bring the token.
TEST(ResourceBounds, MetricsWithATokenRefuseScrapesWithoutIt) {
  std::string token = fresh_dir("metrics") + "/metrics-token";
  std::ofstream(token) << "scrape-secret\n";
  chmod(token.c_str(), 0600);
  const uint16_t metrics = free_port();
  Bounded server({"--metrics-port", std::to_string(metrics), "--metrics-token-file", token});
  ASSERT_TRUE(metrics_up(metrics));
  EXPECT_NE(scrape(metrics, "", 3000).find("401"), std::string::npos);
  EXPECT_NE(scrape(metrics, "Authorization: Bearer wrong\r\n", 3000).find("401"), std::string::npos);
  EXPECT_NE(scrape(metrics, "Authorization: Bearer scrape-secret\r\n", 3000).find("200"), std::string::npos);
}
