// Sending one handshake message (handshake.hpp: a challenge, a hello, a
// join and their replies) as a frame of its own.
#pragma once
#include <cstdint>

#include "protocol/frame_io.hpp"

namespace rgpu::proto {

template <typename M>
void send_message(transport::Connection& conn, uint16_t op, const M& m) {
  Writer w;
  m.encode(w);
  send_frame(conn, FrameHeader{.op = op}, w.bytes());
}

}  // namespace rgpu::proto
