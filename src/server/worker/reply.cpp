#include "server/worker/reply.hpp"

#include <unistd.h>

#include "protocol/frame_io.hpp"
#include "protocol/ops.hpp"

namespace rgpu::server {

namespace {
proto::Writer prefix(Lane& lane, int32_t status) {
  proto::Writer w;
  w.put(proto::ReplyPrefix{status, lane.deferred});
  lane.deferred = cudaSuccess;
  return w;
}
}  // namespace

void send_reply(Lane& lane, int32_t status, const proto::Writer& out) {
  proto::Writer w = prefix(lane, status);
  const auto& body = out.bytes();
  iovec parts[2] = {{const_cast<uint8_t*>(w.bytes().data()), w.size()},
                    {const_cast<uint8_t*>(body.data()), body.size()}};
  proto::FrameHeader h{.magic = proto::kFrameMagic, .op = proto::kOpReply};
  h.args_len = static_cast<uint32_t>(w.size() + body.size());
  iovec all[3] = {{&h, sizeof h}, parts[0], parts[1]};
  if (status == cudaSuccess && lane.reply_fd >= 0) {
    int fd = lane.reply_fd;
    lane.reply_fd = -1;
    try {
      lane.connection().send_with_fd(all, fd);
    } catch (...) {
      close(fd);
      throw;
    }
    close(fd);  // the client has its own now
    return;
  }
  drop_reply_fd(lane);
  lane.connection().send(all);
}

void drop_reply_fd(Lane& lane) {
  if (lane.reply_fd >= 0) close(lane.reply_fd);
  lane.reply_fd = -1;
}

void begin_streamed_reply(Lane& lane, uint64_t n) {
  proto::Writer w = prefix(lane, cudaSuccess);
  proto::FrameHeader h{.magic = proto::kFrameMagic, .op = proto::kOpReply};
  h.args_len = static_cast<uint32_t>(w.size());
  h.payload_len = n + sizeof(int32_t);
  iovec all[2] = {{&h, sizeof h}, {const_cast<uint8_t*>(w.bytes().data()), w.size()}};
  lane.connection().send(all, true);
  lane.reply_sent = true;
}

}  // namespace rgpu::server
