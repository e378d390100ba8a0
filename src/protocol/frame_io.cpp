#include "protocol/frame_io.hpp"

#include <algorithm>

namespace rgpu::proto {

void send_frame(transport::Connection& c, FrameHeader h, std::span<const uint8_t> args,
                std::span<const iovec> payload) {
  h.magic = kFrameMagic;
  h.args_len = static_cast<uint32_t>(args.size());
  h.payload_len = 0;
  for (const iovec& v : payload) h.payload_len += v.iov_len;
  iovec parts[8];
  size_t n = 0;
  parts[n++] = {&h, sizeof h};
  if (!args.empty()) parts[n++] = {const_cast<uint8_t*>(args.data()), args.size()};
  if (payload.size() <= std::size(parts) - n) {
    for (const iovec& v : payload) parts[n++] = v;
    c.send({parts, n});
    return;
  }
  c.send({parts, n});
  c.send(payload);
}

FrameHeader recv_header(transport::Connection& c) {
  FrameHeader h;
  c.recv(&h, sizeof h);
  if (h.magic != kFrameMagic) throw DecodeError("bad frame magic");
  if (h.args_len > kMaxArgsBytes) throw DecodeError("frame arguments too large");
  if (h.payload_len > kMaxPayloadBytes) throw DecodeError("frame payload too large");
  return h;
}

void recv_args(transport::Connection& c, const FrameHeader& h, std::vector<uint8_t>& args) {
  args.resize(h.args_len);
  if (h.args_len) c.recv(args.data(), h.args_len);
}

void discard(transport::Connection& c, uint64_t n) {
  char sink[64 * 1024];
  while (n > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, sizeof sink));
    c.recv(sink, chunk);
    n -= chunk;
  }
}

}  // namespace rgpu::proto
