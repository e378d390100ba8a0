#include "server/worker/session_loop.hpp"

#include <unistd.h>

#include <algorithm>

#include "common/log.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/op_names.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/reply.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

void send_hello_reply(transport::Connection& conn, const proto::HelloReply& r) {
  proto::Writer w;
  r.encode(w);
  proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
}

// Returns the GPUs granted, or none when the hello is refused (and says so).
std::vector<int> handshake(Backend& backend, transport::Connection& conn, const SessionLimits& limits) {
  proto::Challenge challenge{proto::random_nonce(), static_cast<uint8_t>(!limits.token.empty())};
  proto::Writer cw;
  challenge.encode(cw);
  proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpChallenge}, cw.bytes());
  auto h = proto::recv_header(conn);
  if (h.op != proto::kOpHello || h.payload_len != 0) throw proto::DecodeError("first frame is not a hello");
  std::vector<uint8_t> args;
  proto::recv_args(conn, h, args);
  proto::Reader r(args);
  proto::Hello hello = proto::Hello::decode(r);

  proto::HelloReply reply;
  reply.protocol_version = proto::kProtocolVersion;
  reply.worker_pid = getpid();
  reply.backend = backend.name();
  backend.versions(&reply.driver_version, &reply.runtime_version);
  if (!limits.token.empty() && !proto::proof_matches(limits.token, challenge.nonce, hello.proof)) {
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
  if (reply.status == cudaSuccess && hello.gpus.empty()) {
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
  send_hello_reply(conn, reply);
  if (reply.status != cudaSuccess) {
    RGPU_LOG(warn, "refused %s (%s): %s", conn.peer().c_str(), hello.client_name.c_str(), reply.message.c_str());
    return {};
  }
  RGPU_LOG(info, "session for %s (%s) on GPUs of %zu", conn.peer().c_str(), hello.client_name.c_str(),
           hello.gpus.size());
  return hello.gpus;
}

}  // namespace

void serve_session(Backend& backend, transport::Connection& conn, const SessionLimits& limits) {
  try {
    std::vector<int> gpus = handshake(backend, conn, limits);
    if (gpus.empty()) return;
    SessionContext s(backend, gpus, limits.module_cache_dir);
    Dispatcher dispatcher;
    std::vector<uint8_t> args;
    int current = -1;
    for (;;) {
      proto::FrameHeader h = proto::recv_header(conn);
      proto::recv_args(conn, h, args);
      Request req(h, args, conn);
      proto::Writer out;
      s.reply_sent = false;
      int32_t status;
      Handler handler = dispatcher.find(h.op);
      if (!handler) {
        RGPU_LOG(warn, "unknown call %u from %s", h.op, conn.peer().c_str());
        status = cudaErrorNotSupported;
      } else if (!s.has_gpu(h.device)) {
        status = cudaErrorInvalidDevice;
      } else if (h.device != current && (status = backend.set_device(h.device)) != cudaSuccess) {
      } else {
        current = h.device;
        try {
          status = handler(s, req, out);
        } catch (const proto::DecodeError& e) {
          RGPU_LOG(warn, "malformed %s from %s: %s", proto::op_name(h.op), conn.peer().c_str(), e.what());
          status = cudaErrorInvalidValue;
          out.clear();
        }
      }
      // Descriptors no handler took (a confused or hostile client) are closed.
      for (int fd; (fd = conn.take_fd()) >= 0;) close(fd);
      if (s.reply_sent) continue;
      // A refused call's payload is still on the wire: drop it to stay in step.
      proto::discard(conn, req.payload_left());
      if (h.flags & proto::kFlagAsync) {
        if (status != cudaSuccess && s.deferred == cudaSuccess) s.deferred = status;
      } else {
        send_reply(conn, s, status, out);
      }
    }
  } catch (const transport::TransportError& e) {
    RGPU_LOG(info, "session with %s ended: %s", conn.peer().c_str(), e.what());
  } catch (const std::exception& e) {
    RGPU_LOG(warn, "dropping session with %s: %s", conn.peer().c_str(), e.what());
  }
}

}  // namespace rgpu::server
