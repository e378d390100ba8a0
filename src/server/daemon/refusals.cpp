#include "server/daemon/refusals.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "common/log.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/message_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire.hpp"

namespace rgpu::server {
namespace {

constexpr auto kLinger = std::chrono::seconds(2);
// Each refused connection costs a descriptor meanwhile; past this many the
// oldest are closed at once.
constexpr size_t kMaxClosing = 256;

bool is_unix_socket(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 && ss.ss_family == AF_UNIX;
}

}  // namespace

void Refusals::answer(Closing& c) {
  try {
    // Plain tcp even on a TLS port: the daemon never runs a TLS handshake,
    // so a TLS client sees its handshake fail instead of the reason.
    auto tcp = transport::make_tcp_transport();
    auto conn = transport::adopt_socket(dup(c.fd), *tcp);
    // No token asked for: the client sends its hello either way and then
    // reads the reason.
    proto::send_message(*conn, proto::kOpChallenge, proto::Challenge{proto::random_nonce(), 0});
    proto::HelloReply reply;
    reply.status = cudaErrorDevicesUnavailable;
    reply.protocol_version = proto::kProtocolVersion;
    reply.message = c.why;
    proto::send_message(*conn, proto::kOpHello, reply);
    c.answered = std::move(conn);
  } catch (const std::exception& e) {
    RGPU_LOG(debug, "could not tell a turned-away client why: %s", e.what());
    c.until = {};
  }
}

void Refusals::refuse(int fd, const std::string& why) {
  RGPU_LOG(warn, "turned a client away: %s", why.c_str());
  if (closing_.size() >= kMaxClosing) close_at(0);
  closing_.push_back({fd, why, nullptr, std::chrono::steady_clock::now() + kLinger});
  if (!is_unix_socket(fd)) answer(closing_.back());
}

std::vector<int> Refusals::descriptors() const {
  std::vector<int> out;
  for (const Closing& c : closing_) out.push_back(c.fd);
  return out;
}

void Refusals::on_readable(int fd) {
  for (size_t i = 0; i < closing_.size(); ++i) {
    if (closing_[i].fd != fd) continue;
    if (!closing_[i].answered) {
      answer(closing_[i]);  // the shared rings are here
      return;
    }
    char sink[4096];
    if (recv(fd, sink, sizeof sink, MSG_DONTWAIT) <= 0) close_at(i);
    return;
  }
}

void Refusals::expire() {
  auto now = std::chrono::steady_clock::now();
  for (size_t i = closing_.size(); i-- > 0;)
    if (closing_[i].until <= now) close_at(i);
}

void Refusals::close_at(size_t i) {
  close(closing_[i].fd);
  closing_.erase(closing_.begin() + static_cast<long>(i));
}

}  // namespace rgpu::server
