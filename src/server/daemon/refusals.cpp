#include "server/daemon/refusals.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "common/log.hpp"
#include "protocol/codec.hpp"
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

template <typename M>
void append_frame(std::vector<uint8_t>& out, uint16_t op, const M& m) {
  proto::Writer w;
  m.encode(w);
  proto::FrameHeader h{.op = op};
  h.args_len = static_cast<uint32_t>(w.bytes().size());
  const auto* p = reinterpret_cast<const uint8_t*>(&h);
  out.insert(out.end(), p, p + sizeof h);
  out.insert(out.end(), w.bytes().begin(), w.bytes().end());
}

// The challenge (asking no token: the client sends its hello either way and
// then reads the reason) and the refused hello reply, sent without waiting;
// false when they did not all fit.
bool answer(int fd, const std::string& why) {
  // Plain tcp even on a TLS port: the daemon never runs a TLS handshake,
  // so a TLS client sees its handshake fail instead of the reason.
  std::vector<uint8_t> bytes;
  append_frame(bytes, proto::kOpChallenge, proto::Challenge{proto::random_nonce(), 0});
  proto::HelloReply reply;
  reply.status = cudaErrorDevicesUnavailable;
  reply.protocol_version = proto::kProtocolVersion;
  reply.message = why;
  append_frame(bytes, proto::kOpHello, reply);
  return send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

}  // namespace

void Refusals::refuse(int fd, std::string_view kind, const std::string& why) {
  warnings_.warn(kind, "turned a client away: %s", why.c_str());
  if (is_unix_socket(fd) || !answer(fd, why)) {
    close(fd);
    return;
  }
  if (closing_.size() >= kMaxClosing) close_at(0);
  closing_.push_back({fd, std::chrono::steady_clock::now() + kLinger});
}

std::vector<int> Refusals::descriptors() const {
  std::vector<int> out;
  for (const Closing& c : closing_) out.push_back(c.fd);
  return out;
}

void Refusals::on_readable(int fd) {
  for (size_t i = 0; i < closing_.size(); ++i) {
    if (closing_[i].fd != fd) continue;
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
