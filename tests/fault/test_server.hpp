// Running rgpu-server (host-test backend) from fault tests.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/handshake.hpp"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace rgpu::client {
class Session;
}

namespace rgpu::test {

// A TCP port nothing listens on now.
uint16_t free_port();
// This build's rgpu-server, or RGPU_TEST_SERVER_BIN's.
const char* server_binary();
// Starts rgpu-server on 127.0.0.1:port (host-test backend, its own process
// group, stderr to `log` or nowhere) and waits until it accepts connections.
pid_t start_server(uint16_t port, std::vector<std::string> extra, const std::string& log = "");
// Signals the server's whole process group and reaps the daemon.
void stop_server(pid_t pid, int signal = SIGTERM);
// A server stopped when its test ends, by a failed assertion too (its
// daemon would otherwise hold the test's output open).
class ServerProcess {
 public:
  ServerProcess(uint16_t port, std::vector<std::string> extra) : pid_(start_server(port, std::move(extra))) {}
  ~ServerProcess() { stop_server(pid_); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};
// The worker processes the daemon has (idle ones ready and ones serving).
size_t workers_of(pid_t daemon);
// Descriptors process `pid` holds open, and its threads.
size_t open_descriptors(pid_t pid);
size_t threads_of(pid_t pid);
// Whether process `pid` exists (and is not a zombie).
bool running(pid_t pid);

// A client process (fault_client.cpp) with a session open.
struct ClientProcess {
  pid_t pid = -1;
  pid_t worker = -1;  // the worker serving its session; -1: none
};
ClientProcess start_client(uint16_t port, const char* transport, const char* mode);

// A raw tcp connection to the server on `port`, past its challenge.
std::unique_ptr<transport::Connection> connect_raw(uint16_t port);
// A raw connection that has completed the handshake (asking for GPU 0,
// saying it speaks `version`); the server's answer goes to *reply when
// asked for.
std::unique_ptr<transport::Connection> open_raw_session(uint16_t port, proto::HelloReply* reply = nullptr,
                                                        uint32_t version = proto::kProtocolVersion);
// Reads a reply with no outputs and returns its status.
int32_t reply_status(transport::Connection& c);
// Sends one call on a raw session and returns its reply's status; its
// outputs go to *out.
int32_t raw_call(transport::Connection& c, uint16_t op, const proto::Writer& args, std::vector<uint8_t>* out = nullptr,
                 std::span<const iovec> payload = {});

// Sends a join with `secret` on a raw connection to a session's join point
// and returns the server's answer.
proto::JoinReply raw_join(transport::Connection& c, std::vector<uint8_t> secret);

// Runs `body` in a child process as a second local user (`rgpu-tenant`
// where CI made it, else uid 65534); returns what it returned (or 100 +
// the signal that killed it).
int as_second_user(const std::function<int()>& body);

// A client library session on GPU 0 of the server on `port` (a test
// failure, and null, when refused), and a synchronize through it.
std::unique_ptr<client::Session> open_session(uint16_t port, const char* transport);
int32_t synchronize(client::Session& s);

}  // namespace rgpu::test
