#include "byte_stream_connection.hpp"
#include "fuzz_targets.hpp"
#include "host_test_backend.hpp"
#include "protocol/frame_io.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/lane.hpp"
#include "server/worker/reply.hpp"
#include "server/worker/request.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::fuzz {

constexpr uint64_t kSessionMemory = 1ull << 30;

// One input is one session on one connection: its frames run in order as
// serve_lane runs them (the sequence gate aside: one connection is in order).
int dispatcher(const uint8_t* data, size_t size) {
  static const server::Dispatcher dispatcher;
  server::Backend& backend = host_test_backend();
  ByteStreamConnection conn({data, size});
  {
    server::SessionContext context(backend, {0, 1}, "");
    // Bounded as a deployed server bounds a session (max-session-memory,
    // max-session-host-memory): unbounded, one frame asks for as much
    // page-locked staging as the machine has, whose ASan shadow alone passes
    // the fuzzer's memory limit.
    context.quota.set_limit(kSessionMemory);
    context.host_memory.set_limit(kSessionMemory);
    server::Lane lane(conn);
    std::vector<uint8_t> args;
    int current = -1;
    try {
      for (;;) {
        proto::FrameHeader h = proto::recv_header(conn);
        proto::recv_args(conn, h, args);
        const uint16_t green = proto::header_green_slot(h.device);
        h.device = proto::header_ordinal(h.device);
        server::Request req(h, args, lane);
        proto::Writer out;
        lane.reply_sent = false;
        int32_t status = dispatcher.run(context, req, out, green, current);
        if (lane.reply_sent) {
          server::drop_reply_fd(lane);
          continue;
        }
        proto::discard(conn, req.payload_left());
        if ((h.flags & proto::kFlagAsync) && !(h.flags & proto::kFlagAnswer))
          server::drop_reply_fd(lane);
        else
          server::send_reply(lane, status, out);
      }
    } catch (const std::exception&) {
      // The connection ends here (its input is used up, or a frame broke
      // the stream), as serve_connection ends it.
    }
    server::drop_reply_fd(lane);
    context.host_callbacks.close();
  }
  reset_host_test_backend();
  return 0;
}

}  // namespace rgpu::fuzz
