#include "client/core/session.hpp"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/log.hpp"
#include "client/core/pipeline_block.hpp"
#include "client/core/thread_resident.hpp"
#include "client/core/transport_choice.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/auth.hpp"
#include "protocol/credential.hpp"
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

// The lanes the calling thread holds; released to their sessions when the
// thread ends (a library's exit handler may still call in from the main
// thread at exit: cuFFT's does). Sessions live as long as the process.
struct ThreadLanes {
  struct Entry {
    Session* session;
    Lane* lane;
    bool own;  // false: the session's first lane, shared
  };
  std::vector<Entry> entries;
  ~ThreadLanes() {
    for (auto& e : entries)
      if (e.own) e.session->release(e.lane);
  }
};
ThreadResident<ThreadLanes> t_lanes;

}  // namespace

Session::~Session() {
  std::erase_if(t_lanes->entries, [this](const ThreadLanes::Entry& e) { return e.session == this; });
}

namespace {

// The secret in the file the environment variable `variable` names; empty
// when unset, or with *why when the file is unusable
// (proto::read_secret_file: mode 600 or refused).
std::string secret_named_by(const char* variable, std::string* why) {
  const char* path = std::getenv(variable);
  if (!path || !*path) return "";
  std::string secret = proto::read_secret_file(path, why);
  if (secret.empty()) *why = std::string(variable) + " " + *why;
  return secret;
}

// The job credential from RGPU_CREDENTIAL, else RGPU_CREDENTIAL_FILE.
std::string client_credential(std::string* why) {
  if (const char* c = std::getenv("RGPU_CREDENTIAL"); c && *c) return c;
  return secret_named_by("RGPU_CREDENTIAL_FILE", why);
}

// The handshake on a new connection: answers the challenge (token,
// credential, job key: each proved, none sent) with `hello`, then reads the
// server's reply. Nullopt with why when the client cannot answer or the
// server refuses (its refusal then in *refused, when given).
std::optional<proto::HelloReply> exchange_hello(transport::Connection& conn, const transport::Endpoint& server,
                                                const std::string& transport_name, proto::Hello hello,
                                                const std::string& job_key, std::string* why,
                                                proto::HelloReply* refused = nullptr) {
  std::vector<uint8_t> challenge_args;
  try {
    handshake_frame(conn, proto::kOpChallenge, challenge_args);
  } catch (const transport::TransportError& e) {
    // A TLS server waits for a TLS greeting, then closes a plain connection.
    if (transport_name != "tcp") throw;
    throw transport::TransportError(std::string(e.what()) +
                                    " (a server with TLS closes plain connections: set RGPU_TRANSPORT=tls)");
  }
  proto::Reader cr(challenge_args);
  auto challenge = proto::Challenge::decode(cr);
  if (!job_key.empty()) hello.key_proof = proto::auth_proof(job_key, challenge.nonce);
  if (challenge.token_required && job_key.empty()) {
    std::string unusable;
    std::string token = secret_named_by("RGPU_TOKEN_FILE", &unusable);
    if (token.empty()) {
      *why = unusable.empty() ? "server " + server.to_string() + " requires a token: set RGPU_TOKEN_FILE" : unusable;
      return std::nullopt;
    }
    hello.proof = proto::auth_proof(token, challenge.nonce);
  }
  if (challenge.credential_required && job_key.empty()) {
    std::string unusable;
    std::string line = client_credential(&unusable);
    if (!unusable.empty()) {
      *why = unusable;
      return std::nullopt;
    }
    if (!line.empty()) {
      auto held = proto::split_credential(line);
      if (!held) {
        *why = "RGPU_CREDENTIAL (or RGPU_CREDENTIAL_FILE) holds no rgpu credential";
        return std::nullopt;
      }
      hello.credential = held->claims;
      hello.credential_proof = proto::credential_proof(*held, challenge.nonce);
    }
  }
  hello.protocol_version = proto::kProtocolVersion;
  hello.cuda_runtime_version = CUDART_VERSION;
  hello.client_name = program_invocation_short_name;
  hello.client_pid = static_cast<uint32_t>(getpid());
  proto::Writer w;
  hello.encode(w);
  proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
  std::vector<uint8_t> args;
  handshake_frame(conn, proto::kOpHello, args);
  proto::Reader r(args);
  auto reply = proto::HelloReply::decode(r);
  if (reply.status != cudaSuccess) {
    *why = "server " + server.to_string() + " refused: " + reply.message;
    if (refused) *refused = std::move(reply);
    return std::nullopt;
  }
  return reply;
}
}  // namespace

Session::Session(transport::Endpoint server, std::string transport_name)
    : server_(std::move(server)), transport_name_(std::move(transport_name)) {}

std::unique_ptr<Session> Session::open(const transport::Endpoint& server, const std::string& transport,
                                       const std::vector<int>& gpus, std::string* why) {
  try {
    std::string transport_name;
    auto conn = connect_to(server, transport, kConnectTimeoutMs, &transport_name);
    std::unique_ptr<Session> s(new Session(server, transport_name));
    proto::Hello hello;
    hello.gpus = gpus;
    hello.pipeline_block = pipeline_block_from_environment();
    auto reply = exchange_hello(*conn, server, transport_name, std::move(hello), "", why);
    if (!reply) return nullptr;
    s->hello_ = std::move(*reply);
    RGPU_LOG(info, "session with %s over %s (worker %u, backend %s)", server.to_string().c_str(),
             transport_name.c_str(), s->hello_.worker_pid, s->hello_.backend.c_str());
    s->lanes_.push_back(std::make_unique<Lane>(*s, std::move(conn)));
    s->first_ = s->lanes_.back().get();
    s->idle_.push_back(s->first_);
    if (!gpus.empty()) s->heartbeat_ = Heartbeat::start(*s);
    return s;
  } catch (const std::exception& e) {
    *why = "cannot reach rgpu server " + server.to_string() + ": " + e.what();
    return nullptr;
  }
}

Session::ProbeAnswer Session::probe(const transport::Endpoint& server, const std::string& transport) {
  ProbeAnswer answer;
  try {
    auto conn = connect_to(server, transport, kConnectTimeoutMs, &answer.transport);
    answer.reached = true;
    proto::HelloReply refused;
    answer.reply = exchange_hello(*conn, server, answer.transport, proto::Hello{}, "", &answer.why, &refused);
    answer.refused = !answer.reply && refused.status != cudaSuccess;
    if (answer.refused) answer.reply = std::move(refused);
  } catch (const std::exception& e) {
    answer.why = "cannot reach rgpu server " + server.to_string() + ": " + e.what();
  }
  return answer;
}

std::optional<proto::HelloReply> Session::ask(const transport::Endpoint& server, uint8_t request,
                                              const std::string& job_key, const std::string& job, std::string* why,
                                              uint32_t session, const std::string& move_to) {
  try {
    std::string transport_name;
    auto conn = connect_to(server, "", kConnectTimeoutMs, &transport_name);
    proto::Hello hello;
    hello.request = request;
    hello.job = job;
    hello.session = session;
    hello.move_to = move_to;
    return exchange_hello(*conn, server, transport_name, std::move(hello), job_key, why);
  } catch (const std::exception& e) {
    *why = "cannot reach rgpu server " + server.to_string() + ": " + e.what();
    return std::nullopt;
  }
}

cudaError_t Session::lost(const char* what) {
  if (!dead_.exchange(true)) {
    RGPU_LOG(error, "lost the server %s: %s", server_.to_string().c_str(), what);
    std::lock_guard lock(mutex_);
    for (auto& l : lanes_) l->shutdown();
  }
  return cudaErrorDevicesUnavailable;
}

void Session::retire() {
  dead_ = true;
  heartbeat_.reset();
  std::lock_guard lock(mutex_);
  for (auto& l : lanes_) l->shutdown();
}

void Session::release(Lane* lane) {
  std::lock_guard lock(mutex_);
  idle_.push_back(lane);
}

Lane* Session::dedicated_lane() {
  if (joining_failed_) return nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      Lane* lane = idle_.back();
      idle_.pop_back();
      return lane;
    }
  }
  auto conn = join(proto::kJoinCalls);
  if (!conn) return nullptr;
  std::lock_guard lock(mutex_);
  lanes_.push_back(std::make_unique<Lane>(*this, std::move(conn)));
  return lanes_.back().get();
}

bool Session::copy_in_background(const BackgroundCopies::Copy& copy, unsigned parts) {
  std::call_once(background_once_, [this] { background_ = std::make_unique<BackgroundCopies>(*this); });
  if (!background_->queue(copy, parts)) return false;
  background_used_ = true;
  return true;
}

void Session::finish_background_copies() {
  drain_downloads(~uint64_t{0});
  if (background_used_) background_->drain();
}

void Session::wait_background_copies(uint64_t seq, uint16_t device, uint64_t stream) {
  drain_downloads(seq);
  if (background_used_) background_->wait_before_on(seq, device, stream);
}

cudaError_t Session::drain_downloads(uint64_t seq) {
  if (unread_downloads_.load() == 0) return cudaSuccess;
  std::vector<Lane*> lanes;
  {
    std::lock_guard lock(mutex_);
    for (auto& l : lanes_) lanes.push_back(l.get());
  }
  cudaError_t first = cudaSuccess;
  for (Lane* l : lanes)
    if (cudaError_t e = l->drain(seq); first == cudaSuccess) first = e;
  return first;
}

HostCallbackRunner& Session::host_callbacks() {
  std::call_once(callbacks_once_, [this] { callbacks_ = std::make_unique<HostCallbackRunner>(*this); });
  return *callbacks_;
}

void Session::drop_fd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

void Session::mark_idle(uint64_t seq, uint16_t device, uint64_t stream) {
  // The per-thread default stream is a different stream for each thread.
  if (seq == 0 || stream == reinterpret_cast<uint64_t>(cudaStreamPerThread)) return;
  std::lock_guard lock(idle_mutex_);
  if (seq >= idle_stream_.seq) idle_stream_ = {seq, device, stream};
}

bool Session::synchronized_already(uint16_t device, uint64_t stream, cudaError_t* status) {
  uint64_t seq;
  {
    std::lock_guard lock(idle_mutex_);
    seq = idle_stream_.seq;
    if (seq == 0 || seq + 1 != next_seq_.load() || idle_stream_.device != device || idle_stream_.stream != stream)
      return false;
  }
  // A background download numbered before the mark may still be on the wire.
  *status = settle(cudaSuccess, seq + 1);
  return true;
}

cudaError_t Session::settle(cudaError_t status, uint64_t seq) {
  // A query answering "not ready" promises nothing about earlier work; an
  // unnumbered request (seq 0) is ordered after nothing.
  if (dead_ || status == cudaErrorNotReady || seq == 0) return status;
  cudaError_t downloads = drain_downloads(seq);
  if (status == cudaSuccess) status = downloads;
  if (!background_used_) return status;
  cudaError_t copies = background_->settle(seq);
  return status == cudaSuccess ? copies : status;
}

Lane& Session::lane() {
  for (auto& e : t_lanes->entries)
    if (e.session == this) return *e.lane;
  Lane* lane = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      lane = idle_.back();
      idle_.pop_back();
    }
  }
  bool own = true;
  if (!lane) {
    if (auto conn = join(proto::kJoinCalls)) {
      std::lock_guard lock(mutex_);
      lanes_.push_back(std::make_unique<Lane>(*this, std::move(conn)));
      lane = lanes_.back().get();
    } else {
      lane = first_;
      own = false;
    }
  }
  t_lanes->entries.push_back({this, lane, own});
  return *lane;
}

std::unique_ptr<transport::Connection> Session::join(uint8_t purpose) {
  if (joining_failed_ || dead_) return nullptr;
  try {
    if (hello_.join_secret.empty()) throw transport::TransportError("the server offers no way to join");
    // A join takes the first connection's way: its own Unix socket over shm
    // (whose worker maps our rings only once it has seen the secret), a port
    // on the server's host (with TLS or UCX if the first had it) otherwise.
    auto conn = hello_.join_path.empty()
                    ? transport_named(transport_name_).connect({server_.host, hello_.join_port}, kConnectTimeoutMs)
                    : transport::connect_shm_join(hello_.join_path, hello_.join_secret);
    proto::Writer w;
    proto::Join{hello_.join_secret, purpose}.encode(w);
    proto::send_frame(*conn, proto::FrameHeader{.op = proto::kOpJoin}, w.bytes());
    std::vector<uint8_t> args;
    handshake_frame(*conn, proto::kOpJoin, args);
    proto::Reader r(args);
    auto reply = proto::JoinReply::decode(r);
    if (reply.status != cudaSuccess) throw transport::TransportError(reply.message);
    return conn;
  } catch (const std::exception& e) {
    RGPU_LOG(warn, "a new thread cannot join the session with %s (%s): threads share one connection",
             server_.to_string().c_str(), e.what());
    joining_failed_ = true;
    return nullptr;
  }
}

}  // namespace rgpu::client
