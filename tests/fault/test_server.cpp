#include "test_server.hpp"

#include <gtest/gtest.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <cuda_runtime_api.h>

#include <cstring>

#include "client/core/session.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/ops.hpp"
#include "transport/transport.hpp"

namespace rgpu::test {

uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// RGPU_TEST_SERVER_BIN runs the tests against another build's server (an
// older one, to show a test catches what a fix fixed).
const char* server_binary() {
  const char* other = std::getenv("RGPU_TEST_SERVER_BIN");
  return other && *other ? other : RGPU_SERVER_BIN;
}

pid_t start_server(uint16_t port, std::vector<std::string> extra, const std::string& log) {
  const char* binary = server_binary();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (!freopen(log.empty() ? "/dev/null" : log.c_str(), "w", stderr)) _exit(126);
    std::vector<std::string> args{binary, "--backend", "host-test", "--listen", "127.0.0.1",
                                  "--port", std::to_string(port), "--module-cache", ""};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary, argv.data());
    _exit(127);
  }
  for (int i = 0; i < 100; ++i) {
    try {
      transport::make_tcp_transport()->connect({"127.0.0.1", port}, 1000);
      // Listening, and it is this daemon that listens (another test's
      // server may have taken the port meanwhile).
      if (waitpid(pid, nullptr, WNOHANG) != 0) ADD_FAILURE() << "rgpu-server on port " << port << " exited";
      return pid;
    } catch (const transport::TransportError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ADD_FAILURE() << "server did not start";
  return pid;
}

void stop_server(pid_t pid, int signal) {
  kill(-pid, signal);
  waitpid(pid, nullptr, 0);
}

size_t workers_of(pid_t daemon) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string pid, name, state;
    pid_t parent = 0;
    if (stat >> pid >> name >> state >> parent && parent == daemon) ++n;
  }
  return n;
}

namespace {

// Entries of /proc/<pid>/<dir>.
size_t proc_entries(pid_t pid, const char* dir) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/" + dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

}  // namespace

size_t open_descriptors(pid_t pid) { return proc_entries(pid, "fd"); }

size_t threads_of(pid_t pid) { return proc_entries(pid, "task"); }

bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string id, name, state;
  return stat >> id >> name >> state && state != "Z" && state != "X";
}

ClientProcess start_client(uint16_t port, const char* transport, const char* mode) {
  int out[2];
  if (pipe(out) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    if (!freopen("/dev/null", "w", stderr)) _exit(126);
    std::string p = std::to_string(port);
    execl(RGPU_FAULT_CLIENT_BIN, RGPU_FAULT_CLIENT_BIN, p.c_str(), transport, mode, nullptr);
    _exit(127);
  }
  close(out[1]);
  char line[32] = {};
  size_t got = 0;
  while (got < sizeof line - 1) {
    ssize_t n = read(out[0], line + got, sizeof line - 1 - got);
    if (n <= 0 || line[got + n - 1] == '\n') {
      got += n > 0 ? n : 0;
      break;
    }
    got += n;
  }
  close(out[0]);
  ClientProcess c{pid, -1};
  if (got > 0) c.worker = static_cast<pid_t>(std::atoi(line));
  return c;
}

std::unique_ptr<transport::Connection> connect_raw(uint16_t port) {
  auto c = transport::make_tcp_transport()->connect({"127.0.0.1", port}, 1000);
  auto h = proto::recv_header(*c);
  EXPECT_EQ(h.op, proto::kOpChallenge);
  std::vector<uint8_t> args;
  proto::recv_args(*c, h, args);
  return c;
}

std::unique_ptr<transport::Connection> open_raw_session(uint16_t port, proto::HelloReply* reply, uint32_t version) {
  auto c = connect_raw(port);
  proto::Hello hello{version, CUDART_VERSION, {0}, "fault-test", {}};
  proto::Writer w;
  hello.encode(w);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
  auto h = proto::recv_header(*c);
  std::vector<uint8_t> args;
  proto::recv_args(*c, h, args);
  if (reply) {
    proto::Reader r(args);
    *reply = proto::HelloReply::decode(r);
  }
  return c;
}

int32_t reply_status(transport::Connection& c) {
  auto h = proto::recv_header(c);
  std::vector<uint8_t> args;
  proto::recv_args(c, h, args);
  EXPECT_EQ(h.op, proto::kOpReply);
  EXPECT_EQ(h.payload_len, 0u);
  proto::ReplyPrefix p;
  std::memcpy(&p, args.data(), sizeof p);
  return p.status;
}

int32_t raw_call(transport::Connection& c, uint16_t op, const proto::Writer& args, std::vector<uint8_t>* out,
                 std::span<const iovec> payload) {
  proto::send_frame(c, proto::FrameHeader{.op = op}, args.bytes(), payload);
  auto h = proto::recv_header(c);
  std::vector<uint8_t> bytes;
  proto::recv_args(c, h, bytes);
  EXPECT_EQ(h.op, proto::kOpReply);
  proto::ReplyPrefix p;
  std::memcpy(&p, bytes.data(), sizeof p);
  if (out) out->assign(bytes.begin() + sizeof p, bytes.end());
  return p.status;
}

proto::JoinReply raw_join(transport::Connection& c, std::vector<uint8_t> secret) {
  proto::Writer w;
  proto::Join{std::move(secret)}.encode(w);
  proto::send_frame(c, proto::FrameHeader{.op = proto::kOpJoin}, w.bytes());
  auto h = proto::recv_header(c);
  std::vector<uint8_t> args;
  proto::recv_args(c, h, args);
  EXPECT_EQ(h.op, proto::kOpJoin);
  proto::Reader r(args);
  return proto::JoinReply::decode(r);
}

int as_second_user(const std::function<int()>& body) {
  uid_t uid = 65534;
  gid_t gid = 65534;
  if (passwd* p = getpwnam("rgpu-tenant")) {
    uid = p->pw_uid;
    gid = p->pw_gid;
  }
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(99);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

std::unique_ptr<client::Session> open_session(uint16_t port, const char* transport) {
  std::string why;
  auto s = client::Session::open({"127.0.0.1", port}, transport, {0}, &why);
  EXPECT_TRUE(s) << why;
  return s;
}

int32_t synchronize(client::Session& s) {
  std::vector<uint8_t> reply;
  return s.call(proto::kOpDeviceSynchronize, 0, {}, {}, reply);
}

}  // namespace rgpu::test
