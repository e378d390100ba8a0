#include "client/core/session.hpp"

#include <cuda_runtime_api.h>
#include <errno.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/log.hpp"
#include "protocol/frame_io.hpp"
#include "client/core/transport_choice.hpp"
#include "protocol/auth.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {
constexpr int kConnectTimeoutMs = 5000;
// A busy server may have to start a worker (CUDA initialisation) first; a
// peer that is no rgpu server must not hang the application forever.
constexpr int kHandshakeTimeoutMs = 60000;

proto::FrameHeader handshake_frame(transport::Connection& c, uint16_t op, std::vector<uint8_t>& args) {
  if (!c.wait_readable(kHandshakeTimeoutMs)) throw transport::TransportError("no handshake from the server");
  auto h = proto::recv_header(c);
  proto::recv_args(c, h, args);
  if (h.op != op || h.payload_len != 0) throw proto::DecodeError("unexpected handshake frame");
  return h;
}

std::string client_token() {
  const char* path = std::getenv("RGPU_TOKEN_FILE");
  return path ? proto::read_token_file(path) : "";
}
}  // namespace

Session::Session(transport::Endpoint server, std::unique_ptr<transport::Connection> conn)
    : server_(std::move(server)), conn_(std::move(conn)) {}

std::unique_ptr<Session> Session::open(const transport::Endpoint& server, const std::vector<int>& gpus,
                                       std::string* why) {
  try {
    std::string transport_name;
    auto conn = connect_to(server, kConnectTimeoutMs, &transport_name);
    std::unique_ptr<Session> s(new Session(server, std::move(conn)));
    s->transport_name_ = transport_name;
    std::vector<uint8_t> challenge_args;
    handshake_frame(*s->conn_, proto::kOpChallenge, challenge_args);
    proto::Reader cr(challenge_args);
    auto challenge = proto::Challenge::decode(cr);
    proto::Hello hello;
    if (challenge.token_required) {
      std::string token = client_token();
      if (token.empty()) {
        *why = "server " + server.to_string() + " requires a token: set RGPU_TOKEN_FILE";
        return nullptr;
      }
      hello.proof = proto::auth_proof(token, challenge.nonce);
    }
    hello.protocol_version = proto::kProtocolVersion;
    hello.cuda_runtime_version = CUDART_VERSION;
    hello.gpus = gpus;
    hello.client_name = program_invocation_short_name;
    proto::Writer w;
    hello.encode(w);
    proto::send_frame(*s->conn_, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
    std::vector<uint8_t> args;
    handshake_frame(*s->conn_, proto::kOpHello, args);
    proto::Reader r(args);
    s->hello_ = proto::HelloReply::decode(r);
    if (s->hello_.status != cudaSuccess) {
      *why = "server " + server.to_string() + " refused the session: " + s->hello_.message;
      return nullptr;
    }
    RGPU_LOG(info, "session with %s over %s (worker %u, backend %s)", server.to_string().c_str(),
             transport_name.c_str(), s->hello_.worker_pid, s->hello_.backend.c_str());
    return s;
  } catch (const std::exception& e) {
    *why = "cannot reach rgpu server " + server.to_string() + ": " + e.what();
    return nullptr;
  }
}

cudaError_t Session::lost(const char* what) {
  if (!dead_) RGPU_LOG(error, "lost the server %s: %s", server_.to_string().c_str(), what);
  dead_ = true;
  conn_->shutdown();
  return cudaErrorDevicesUnavailable;
}

cudaError_t Session::receive_reply(std::vector<uint8_t>& reply_args, void* dst, size_t n,
                                   bool report_deferred) {
  auto h = proto::recv_header(*conn_);
  if (h.op != proto::kOpReply) return lost("unexpected frame instead of a reply");
  proto::recv_args(*conn_, h, reply_args);
  if (reply_args.size() < sizeof(proto::ReplyPrefix)) return lost("short reply");
  proto::ReplyPrefix prefix;
  std::memcpy(&prefix, reply_args.data(), sizeof prefix);
  reply_args.erase(reply_args.begin(), reply_args.begin() + sizeof prefix);
  if (h.payload_len != 0) {
    // Only call_into asks for a payload, and then exactly n bytes and the
    // copy's final status follow.
    if (h.payload_len != n + sizeof(int32_t)) return lost("reply payload of unexpected size");
    conn_->recv(dst, n);
    int32_t final_status;
    conn_->recv(&final_status, sizeof final_status);
    if (prefix.status == cudaSuccess) prefix.status = final_status;
  }
  if (prefix.deferred != cudaSuccess && pending_deferred_ == cudaSuccess)
    pending_deferred_ = static_cast<cudaError_t>(prefix.deferred);
  if (prefix.status != cudaSuccess) return static_cast<cudaError_t>(prefix.status);
  if (!report_deferred) return cudaSuccess;
  return std::exchange(pending_deferred_, cudaSuccess);
}

template <typename F>
cudaError_t Session::exchange(F&& f) {
  std::lock_guard lock(mutex_);
  if (dead_) return cudaErrorDevicesUnavailable;
  try {
    return f();
  } catch (const std::exception& e) {
    return lost(e.what());
  }
}

cudaError_t Session::call(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                          std::span<const iovec> payload, std::vector<uint8_t>& reply_args,
                          bool report_deferred) {
  return exchange([&] {
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device}, args, payload);
    return receive_reply(reply_args, nullptr, 0, report_deferred);
  });
}

cudaError_t Session::call_into(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst,
                               size_t n, std::vector<uint8_t>& reply_args) {
  return exchange([&] {
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device}, args);
    return receive_reply(reply_args, dst, n, true);
  });
}

cudaError_t Session::call_with_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int fd,
                                  std::vector<uint8_t>& reply_args) {
  return exchange([&] {
    proto::FrameHeader h{.op = op, .device = device, .args_len = static_cast<uint32_t>(args.size())};
    iovec parts[2] = {{&h, sizeof h}, {const_cast<uint8_t*>(args.data()), args.size()}};
    conn_->send_with_fd(parts, fd);
    return receive_reply(reply_args, nullptr, 0, true);
  });
}

cudaError_t Session::post(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                          std::span<const iovec> payload) {
  return exchange([&] {
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device, .flags = proto::kFlagAsync},
                      args, payload);
    return cudaSuccess;
  });
}

}  // namespace rgpu::client
