#include "server/worker/session_handshake.hpp"

#include <unistd.h>

#include <algorithm>

#include "common/log.hpp"
#include "common/printable.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/message_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "server/pool/pool_status.hpp"
#include "server/daemon/admission.hpp"
#include "server/worker/compute_share.hpp"
#include "transport/socket/socket_address.hpp"

namespace rgpu::server {
namespace {

// The connection's first frame, which must carry an `op` message. Its
// caller's HelloDeadline bounds the wait for every byte of it.
template <typename M>
M first_message(transport::Connection& conn, uint16_t op, const char* what) {
  auto h = proto::recv_header(conn);
  if (h.op != op || h.payload_len != 0) throw proto::DecodeError(std::string("first frame is not a ") + what);
  std::vector<uint8_t> args;
  proto::recv_args(conn, h, args);
  proto::Reader r(args);
  return M::decode(r);
}

// False, with the refusal in `reply`, unless the hello proves the job key
// (the scheduler side); `act` says what needs it.
bool from_scheduler(const SessionLimits& limits, const proto::Hello& hello, const proto::Nonce& nonce, const char* act,
                    proto::HelloReply& reply) {
  if (proves_job_key(limits.pool, hello, nonce) && limits.pool.ledger) return true;
  reply.status = cudaErrorNotPermitted;
  reply.message = limits.pool.job_key.empty() ? "this server has no job key (--job-key-file)"
                                              : std::string(act) + " needs this server's job key";
  return false;
}

// `rgpu job-end`: the scheduler side, proving the job key, ends a job.
void answer_end_job(const SessionLimits& limits, const proto::Hello& hello, const proto::Nonce& nonce,
                    proto::HelloReply& reply) {
  if (!from_scheduler(limits, hello, nonce, "ending a job", reply)) return;
  int open = limits.pool.ledger->end_job(hello.job);
  reply.message = "job " + hello.job + " ended: " + std::to_string(open) + " session(s) stopped";
}

// `rgpu migrate`: the scheduler side, proving the job key, asks a session
// to move; its client moves it (or says why not) at its next heartbeat.
void answer_move_session(const SessionLimits& limits, const proto::Hello& hello, const proto::Nonce& nonce,
                         proto::HelloReply& reply) {
  if (!from_scheduler(limits, hello, nonce, "moving a session", reply)) return;
  if (hello.move_to.empty() || hello.move_to.size() > kMaxMoveTarget) {
    reply.status = cudaErrorInvalidValue;
    reply.message = "no place to move the session to";
  } else if (!limits.pool.ledger->ask_move(static_cast<pid_t>(hello.session), hello.move_to)) {
    reply.status = cudaErrorInvalidValue;
    reply.message = "no session " + std::to_string(hello.session) + " on this server";
  } else {
    reply.message = "session " + std::to_string(hello.session) + " asked to move to " + hello.move_to;
  }
}

}  // namespace

SessionGrant open_session(Backend& backend, transport::Connection& conn, const SessionLimits& limits,
                          const std::function<JoinPoint()>& join_point) {
  proto::Challenge challenge{proto::random_nonce(), static_cast<uint8_t>(!limits.token.empty()),
                             static_cast<uint8_t>(!limits.pool.job_key.empty())};
  send_message(conn, proto::kOpChallenge, challenge);
  auto hello = first_message<proto::Hello>(conn, proto::kOpHello, "hello");

  proto::HelloReply reply;
  reply.protocol_version = proto::kProtocolVersion;
  reply.worker_pid = getpid();
  reply.backend = backend.name();
  backend.versions(&reply.driver_version, &reply.runtime_version);
  const bool scheduler = proves_job_key(limits.pool, hello, challenge.nonce);
  // A worker whose CUDA waits for its session's share starts it here for
  // any other answer that needs the GPU.
  bool cuda_started = !limits.cuda_after_admission;
  const auto start_cuda = [&]() -> int32_t {
    if (cuda_started) return cudaSuccess;
    cuda_started = true;
    return backend.init(limits.exported_gpus);
  };
  SessionClaim claim;
  if (!limits.token.empty() && !scheduler && !proto::proof_matches(limits.token, challenge.nonce, hello.proof)) {
    reply.status = cudaErrorNotPermitted;
    reply.message = "authentication failed: this server needs its token (RGPU_TOKEN_FILE)";
  } else if (hello.protocol_version != proto::kProtocolVersion) {
    reply.status = cudaErrorInvalidValue;
    reply.message = "protocol version " + std::to_string(hello.protocol_version) + " is not " +
                    std::to_string(proto::kProtocolVersion);
  } else if (hello.cuda_runtime_version / 1000 != CUDART_VERSION / 1000) {
    reply.status = cudaErrorInsufficientDriver;
    reply.message = "client built for CUDA " + std::to_string(hello.cuda_runtime_version) + ", server serves " +
                    std::to_string(CUDART_VERSION);
  } else if (hello.request == proto::kRequestEndJob) {
    answer_end_job(limits, hello, challenge.nonce, reply);
  } else if (hello.request == proto::kRequestMoveSession) {
    answer_move_session(limits, hello, challenge.nonce, reply);
  } else if (std::string why = scheduler && hello.gpus.empty() ? ""
                                   : check_credential(limits.pool, hello, challenge.nonce, &claim);
             !why.empty()) {
    reply.status = cudaErrorNotPermitted;
    reply.message = why;
  } else if (hello.request == proto::kRequestPoolStatus) {
    // `rgpu smi`: admitted like a probe, or by the job key.
    start_cuda();
    reply.pool_status = pool_status_json(backend, limits.exported_gpus, limits.pool);
  } else {
    for (int g : hello.gpus) {
      const auto& ex = limits.exported_gpus;
      if (std::find(ex.begin(), ex.end(), g) == ex.end()) {
        reply.status = cudaErrorInvalidDevice;
        reply.message = "GPU " + std::to_string(g) + " is not exported by this server";
        break;
      }
    }
  }
  if (reply.status == cudaSuccess && hello.request == proto::kRequestSession && hello.gpus.empty()) {
    start_cuda();
    for (int g : limits.exported_gpus) {
      proto::GpuSummary summary;
      summary.ordinal = g;
      cudaDeviceProp prop;
      size_t free = 0, total = 0;
      if (backend.get_device_properties(&prop, g) == cudaSuccess) summary.name = prop.name;
      if (backend.set_device(g) == cudaSuccess && backend.mem_get_info(&free, &total) == cudaSuccess) {
        summary.total_memory = total;
        summary.free_memory = free;
      }
      reply.gpus.push_back(std::move(summary));
    }
  }
  const bool asks_session = hello.request == proto::kRequestSession && !hello.gpus.empty();
  if (reply.status == cudaSuccess && asks_session && limits.admission_channel >= 0) {
    if (std::string refusal = ask_admission(limits.admission_channel, transport::peer_identity(conn.native_handle())); !refusal.empty()) {
      reply.status = cudaErrorDevicesUnavailable;
      reply.message = refusal;
    }
  }
  if (reply.status == cudaSuccess && asks_session && limits.pool.ledger) {
    claim.gpus = hello.gpus;
    claim.amounts.resize(claim.gpus.size());
    claim.host = conn.peer();
    claim.process = hello.client_name;
    claim.client_pid = hello.client_pid;
    if (std::string why = limits.pool.ledger->admit(getpid(), claim, limits.pool.modes); !why.empty()) {
      reply.status = cudaErrorDevicesUnavailable;
      reply.message = why;
    }
  }
  if (reply.status == cudaSuccess && asks_session && !cuda_started) {
    apply_compute_share(claim);
    if (int32_t e = start_cuda()) {
      reply.status = e;
      reply.message = "the GPU did not start for this session (error " + std::to_string(e) + ")";
    }
  }
  const bool opens = reply.status == cudaSuccess && asks_session;
  if (opens) {
    const JoinPoint join = join_point();
    reply.join_port = join.where.host.empty() ? join.where.port : 0;
    reply.join_path = join.where.host;
    reply.join_secret = join.secret;
  }
  send_message(conn, proto::kOpHello, reply);
  if (limits.counters && asks_session) opens ? limits.counters->session_opened() : limits.counters->session_refused();
  if (reply.status != cudaSuccess) {
    RGPU_LOG(warn, "refused %s (%s): %s", conn.peer().c_str(), printable(hello.client_name).c_str(),
             printable(reply.message, 512).c_str());
    return {};
  }
  if (!opens) return {};
  RGPU_LOG(info, "session for %s (%s%s%s) on GPUs of %zu", conn.peer().c_str(), printable(hello.client_name).c_str(),
           claim.job.empty() ? "" : ", job ", printable(claim.job).c_str(), hello.gpus.size());
  return {hello.gpus, hello.pipeline_block, {transport::peer_identity(conn.native_handle()), claim.job}};
}


std::optional<uint8_t> read_join(transport::Connection& conn, const std::vector<uint8_t>& secret) {
  auto join = first_message<proto::Join>(conn, proto::kOpJoin, "join");
  if (!proto::same_secret(join.secret, secret)) {
    proto::send_message(conn, proto::kOpJoin, proto::JoinReply{cudaErrorNotPermitted, "not a connection of this session"});
    return std::nullopt;
  }
  return join.purpose;
}

void admit_join(transport::Connection& conn) { proto::send_message(conn, proto::kOpJoin, proto::JoinReply{}); }

void refuse_join(transport::Connection& conn, const std::string& why) {
  proto::send_message(conn, proto::kOpJoin, proto::JoinReply{cudaErrorDevicesUnavailable, why});
}

}  // namespace rgpu::server
