#include "server/worker/session_loop.hpp"

#include <poll.h>
#include <unistd.h>

#include <condition_variable>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "common/log.hpp"
#include "protocol/auth.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/op_names.hpp"
#include "protocol/ops.hpp"
#include "server/worker/device_output.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/frame_recorder.hpp"
#include "server/worker/hello_deadline.hpp"
#include "server/worker/lane.hpp"
#include "server/worker/reply.hpp"
#include "server/worker/request.hpp"
#include "server/worker/sequence_gate.hpp"
#include "server/worker/session_context.hpp"
#include "server/worker/session_handshake.hpp"
#include "server/worker/sticky_faults.hpp"
#include "server/worker/session_watch.hpp"
#include "transport/socket/socket_address.hpp"

namespace rgpu::server {
namespace {

// How long the end of a session waits for connections still inside a GPU
// call before the worker exits without them.
constexpr auto kLaneDrainTimeout = std::chrono::seconds(5);

// What every connection of one session shares.
struct Session {
  SessionContext& context;
  const Dispatcher& dispatcher;
  SequenceGate& gate;
  DeviceOutput& output;
  SessionWatch& watch;
  const SessionLimits& limits;
};

// Calls during which CUDA prints what kernels wrote with printf.
bool flushes_device_output(uint16_t op) {
  switch (op) {
    case proto::kOpDeviceSynchronize:
    case proto::kOpStreamSynchronize:
    case proto::kOpEventSynchronize:
    case proto::kOpDeviceReset:
    case proto::kOpMemcpyHtoD:
    case proto::kOpMemcpyDtoD:
    case proto::kOpMemcpy2DHtoD:
    case proto::kOpMemcpy2DDtoD:
    case proto::kOpMemcpyShared:
    case proto::kOpMemset:
    case proto::kOpMemset2D:
      return true;
    default:
      return false;
  }
}

// The calls that queue application kernels, the only code that prints on
// the device. A new launching call must be named here, or what its kernels
// print may reach the application after its next synchronize returns.
bool queues_kernels(uint16_t op) {
  switch (op) {
    case proto::kOpLaunchKernel:
    case proto::kOpLaunchCooperativeKernel:
    case proto::kOpLaunchKernelEx:
    case proto::kOpGraphLaunch:
      return true;
    default:
      return false;
  }
}

// Calls after which the driver has printed what every kernel queued on the
// device before them wrote.
bool prints_all_queued(uint16_t op) { return op == proto::kOpDeviceSynchronize || op == proto::kOpDeviceReset; }

// Sends what kernels printed ahead of a reply, so that it reaches the
// application's output before the call returns, as locally.
// `kernels_before`: the device's queued kernels when the call started.
void send_device_output(Session& s, Lane& lane, const proto::FrameHeader& h, uint64_t kernels_before) {
  bool flush = flushes_device_output(h.op) && s.output.may_hold_output(h.device);
  if (!flush && !s.output.pending()) return;
  auto chunks = s.output.take(flush);
  if (flush && prints_all_queued(h.op)) s.output.printed_through(h.device, kernels_before);
  for (const auto& chunk : chunks) {
    proto::Writer w;
    w.put<uint8_t>(static_cast<uint8_t>(chunk.fd));
    iovec text{const_cast<char*>(chunk.text.data()), chunk.text.size()};
    proto::send_frame(lane.connection(), proto::FrameHeader{.op = proto::kOpDeviceOutput}, w.bytes(), {&text, 1});
  }
}

// Whether the client closed the connection (or it broke), seen without
// reading: a request waiting for its turn reads nothing meanwhile.
bool peer_gone(transport::Connection& conn) {
  pollfd p{conn.native_handle(), POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

// Serves one connection's requests, in order, until it closes. The current
// device is per thread in CUDA, so each connection has its own.
void serve_lane(Session& s, Lane& lane, FrameRecorder* recorder) {
  transport::Connection& conn = lane.connection();
  std::vector<uint8_t> args;
  int current = -1;
  for (;;) {
    if (recorder) recorder->frame_done("dispatcher");
    proto::FrameHeader h = proto::recv_header(conn);
    // Arguments are held in memory: past the limit they are dropped unread
    // and the call refused.
    const bool oversized = s.limits.max_frame_bytes && h.args_len > s.limits.max_frame_bytes;
    if (oversized) {
      s.context.warnings.warn("oversized frame",
                              "%s from %s has %u bytes of arguments, past max-frame-bytes %u: refused",
                              proto::op_name(h.op), conn.peer().c_str(), h.args_len, s.limits.max_frame_bytes);
      proto::discard(conn, h.args_len);
      h.args_len = 0;
    }
    proto::recv_args(conn, h, args);
    const uint16_t green = proto::header_green_slot(h.device);
    h.device = proto::header_ordinal(h.device);
    switch (s.gate.wait_turn(h.seq, proto::parts_before(h.flags), [&] { return peer_gone(conn); })) {
      case SequenceGate::Turn::go: break;
      case SequenceGate::Turn::closed: return;
      case SequenceGate::Turn::out_of_range:
        s.context.warnings.warn("numbered too far ahead",
                                "request %llu from %s numbered too far ahead: connection dropped",
                                static_cast<unsigned long long>(h.seq), conn.peer().c_str());
        return;
      case SequenceGate::Turn::abandoned:
        RGPU_LOG(info, "connection %s closed while a request waited its turn", conn.peer().c_str());
        return;
    }
    const bool async = h.flags & proto::kFlagAsync;
    if (!async) s.gate.started(h.seq);
    Request req(h, args, lane, &s.gate);
    proto::Writer out;
    lane.reply_sent = false;
    // Read only where it is used; a synchronize in a green context waits
    // only for that context's work.
    const uint64_t kernels_before = !green && prints_all_queued(h.op) ? s.output.kernels_queued(h.device) : 0;
    int32_t status;
    s.watch.request_started();
    try {
      status = oversized ? cudaErrorInvalidValue : s.dispatcher.run(s.context, req, out, green, current);
    } catch (...) {
      s.watch.request_ended();
      s.gate.started(h.seq);
      throw;
    }
    s.watch.request_ended();
    if (queues_kernels(h.op)) s.output.kernel_queued(h.device);
    if (s.context.counters) {
      s.context.counters->call(h.op, status != cudaSuccess);
      report_sticky_fault(s.context.counters, h.device, status);
      s.context.counters->bytes(transport_kind(conn), Direction::to_server, h.payload_len);
    }
    if (async) s.gate.started(h.seq);
    // A descriptor its handler did not take (a refused call) is closed.
    if (h.flags & proto::kFlagDescriptor)
      for (int fd; (fd = conn.take_fd()) >= 0;) close(fd);
    if (lane.reply_sent) {
      drop_reply_fd(lane);
      continue;
    }
    // A refused call's payload is still on the wire: drop it to stay in step.
    proto::discard(conn, req.payload_left());
    if (async && !(h.flags & proto::kFlagAnswer)) {
      if (status != cudaSuccess && lane.deferred == cudaSuccess) lane.deferred = status;
      drop_reply_fd(lane);
    } else {
      send_device_output(s, lane, h, kernels_before);
      send_reply(lane, status, out);
    }
  }
}

// Runs serve_lane (recording the frames it reads, with a recorder around
// `conn`) and reports how the connection ended.
void serve_connection(Session& s, transport::Connection& conn, FrameRecorder* recorder) {
  try {
    Lane lane(recorder ? *recorder : conn);
    serve_lane(s, lane, recorder);
  } catch (const transport::TransportError& e) {
    RGPU_LOG(debug, "connection %s ended: %s", conn.peer().c_str(), e.what());
  } catch (const std::exception& e) {
    s.context.warnings.warn("dropped connection", "dropping connection %s: %s", conn.peer().c_str(), e.what());
  }
}

// The connections that joined the session after its first, each served on
// a thread of its own. A joining connection has proved nothing until its
// join is read: at most kMaxJoining are in their join at once (more are
// closed at once, before any thread), each within the hello deadline, and
// max-session-connections is counted before a thread starts.
class JoinedLanes {
 public:
  // `client`: who opened the session (transport::peer_identity).
  JoinedLanes(Session& s, std::vector<uint8_t> secret, std::string client)
      : session_(s), secret_(std::move(secret)), client_(std::move(client)) {}

  void start(std::unique_ptr<transport::Connection> conn) {
    // Another host cannot know the secret, but holding join slots in their
    // hello would keep the session's own threads out: it gets none.
    if (transport::peer_identity(conn->native_handle()) != client_) {
      warn("join from another host", "closed a join from " + conn->peer() + " at once: the session's client is " +
                                         client_);
      return;
    }
    std::lock_guard lock(mutex_);
    if (joining_ >= kMaxJoining) {
      warn("join flood", "closed a join from " + conn->peer() + " at once: " + std::to_string(kMaxJoining) +
                             " joins are in their hello");
      return;
    }
    // Each connection holds at most one request being served: this bounds
    // the requests a session has outstanding. The first connection counts.
    const int limit = session_.limits.max_connections;
    std::string refusal;
    if (limit > 0 && conns_.size() + 2 > static_cast<size_t>(limit))
      refusal = "the session has its most connections (max-session-connections " + std::to_string(limit) + ")";
    auto it = conns_.insert(conns_.end(), std::move(conn));
    ++joining_;
    std::thread([this, it, refusal] {
      transport::Connection& c = **it;
      std::unique_ptr<FrameRecorder> recorder;
      auto purpose = read_join_in_time(c, recorder, refusal);
      try {
        if (purpose == proto::kJoinCallbacks) {
          // Attached before the client hears it joined, and so before any
          // request that needs it.
          session_.context.host_callbacks.attach();
          admit_join(c);
          session_.context.host_callbacks.serve(c);
        } else if (purpose == proto::kJoinHeartbeats) {
          admit_join(c);
          answer_heartbeats(c, session_.watch, session_.limits.peer_timeout_s, session_.limits.pool.ledger);
        } else if (purpose) {
          admit_join(c);
          serve_connection(session_, c, recorder.get());
        }
      } catch (const std::exception& e) {
        RGPU_LOG(warn, "dropping a join from %s: %s", c.peer().c_str(), e.what());
      }
      std::lock_guard lock(mutex_);
      conns_.erase(it);
      if (conns_.empty()) idle_.notify_all();
    }).detach();
  }

  // Ends every connection; false if some are still inside a call after
  // the timeout (a GPU call that does not return).
  bool stop() {
    std::unique_lock lock(mutex_);
    for (auto& c : conns_) c->shutdown();
    return idle_.wait_for(lock, kLaneDrainTimeout, [&] { return conns_.empty(); });
  }

 private:
  static constexpr size_t kMaxJoining = 16;

  // The join, read within the hello deadline: what it joins for, or nothing
  // when it was refused (a wrong secret, `refusal`) or broke.
  std::optional<uint8_t> read_join_in_time(transport::Connection& c, std::unique_ptr<FrameRecorder>& recorder,
                                           const std::string& refusal) {
    std::optional<uint8_t> purpose;
    try {
      HelloDeadline deadline(c.native_handle(), std::chrono::seconds(session_.limits.hello_timeout_s));
      recorder = FrameRecorder::from_env(c);
      purpose = read_join(recorded(recorder, c), secret_);
      if (recorder) recorder->frame_done("handshake");
      if (!purpose) {
        warn("wrong join secret", "refused a join from " + c.peer() + ": wrong secret");
      } else if (!refusal.empty()) {
        refuse_join(c, refusal);
        warn("join over the limit", "refused a join from " + c.peer() + ": " + refusal);
        purpose.reset();
      }
    } catch (const std::exception& e) {
      purpose.reset();
      warn("broken join", "dropping a join from " + c.peer() + ": " + e.what());
    }
    std::lock_guard lock(mutex_);
    --joining_;
    return purpose;
  }

  void warn(std::string_view kind, const std::string& text) {
    session_.context.warnings.warn(kind, "%s", text.c_str());
  }

  Session& session_;
  const std::vector<uint8_t> secret_;
  const std::string client_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::list<std::unique_ptr<transport::Connection>> conns_;  // joined and joining
  size_t joining_ = 0;
};

// Tells the client why the server ends its session (a limit), ahead of
// closing; it reads this where it expects its next reply.
void send_goodbye(transport::Connection& conn, const std::string& why) {
  proto::Writer w;
  w.put_string(why);
  try {
    proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpGoodbye}, w.bytes());
  } catch (const transport::TransportError&) {
    // gone already
  }
}

std::vector<uint8_t> random_secret() {
  auto nonce = proto::random_nonce();
  return {nonce.begin(), nonce.end()};
}

}  // namespace

void serve_session(Backend& backend, transport::Connection& conn, const SessionLimits& limits,
                   HelloDeadline* hello) {
  try {
    // Without a join point every thread of the application shares the first
    // connection (the client falls back to that).
    std::unique_ptr<transport::Listener> join_listener;
    JoinPoint join{{}, random_secret()};
    auto open_join_point = [&] {
      try {
        join_listener = conn.listen_for_joins(join.secret);
        transport::Endpoint where = join_listener->local_endpoint();
        join.where = where.port ? transport::Endpoint{"", where.port} : where;
      } catch (const transport::TransportError& e) {
        RGPU_LOG(warn, "no join point for the session's other threads: %s", e.what());
      }
      return join;
    };
    auto recorder = FrameRecorder::from_env(conn);
    SessionGrant grant = open_session(backend, recorded(recorder, conn), limits, open_join_point);
    // Admitted (or answered and over): the session's own timeouts rule now.
    if (hello) hello->disarm();
    if (recorder) recorder->frame_done("handshake");
    if (grant.gpus.empty()) return;
    // The worker started with its first exported GPU's context; the
    // session's other GPUs get theirs now (making a device current creates
    // its primary context), before any call: some reach a GPU without
    // making it current (access to virtual memory, peer access). The
    // session's first GPU ends current, as CUDA's device 0 starts.
    for (auto g = grant.gpus.rbegin(); g != grant.gpus.rend(); ++g)
      if (int32_t e = backend.set_device(*g)) RGPU_LOG(warn, "GPU %d: no context (error %d)", *g, e);
    SessionContext context(backend, grant.gpus, limits.module_cache_dir, limits.pool.ledger);
    context.pipeline_block = grant.pipeline_block;
    context.counters = limits.counters;
    context.quota.set_limit(limits.max_memory);
    context.host_memory.set_limit(limits.max_host_memory);
    context.bound(limits.bounds);
    context.ipc_owner = grant.owner;
    context.ipc_sharing = limits.ipc_sharing;
    Dispatcher dispatcher;
    SequenceGate gate;
    DeviceOutput output;
    if (!output.capture()) RGPU_LOG(warn, "device printf output stays on the server: cannot capture it");
    SessionWatch watch(limits.idle_timeout_s, limits.peer_timeout_s, [&](const std::string& why, bool client_silent) {
      RGPU_LOG(warn, "ending the session with %s: %s", conn.peer().c_str(), why.c_str());
      // A silent client may read nothing more: the reason goes only to one
      // that listens.
      if (!client_silent) send_goodbye(conn, why);
      conn.shutdown();
    });
    Session s{context, dispatcher, gate, output, watch, limits};
    JoinedLanes joined(s, join.secret, grant.owner.client);
    std::thread acceptor;
    if (join_listener) {
      acceptor = std::thread([&] {
        try {
          for (;;) joined.start(join_listener->accept());
        } catch (const transport::TransportError&) {
          // shut down at the end of the session
        }
      });
    }
    serve_connection(s, conn, recorder.get());
    // The first connection lives as long as the application's session.
    gate.close();
    context.host_callbacks.close();
    if (join_listener) {
      join_listener->shutdown();
      acceptor.join();
    }
    if (!joined.stop()) {
      RGPU_LOG(warn, "session over with calls still running on the GPU: worker exits");
      _exit(0);
    }
  } catch (const transport::TransportError& e) {
    RGPU_LOG(info, "session with %s ended: %s", conn.peer().c_str(), e.what());
  } catch (const std::exception& e) {
    RGPU_LOG(warn, "dropping session with %s: %s", conn.peer().c_str(), e.what());
  }
}

}  // namespace rgpu::server
