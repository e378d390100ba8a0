// Sending replies: status, the pending asynchronous error, outputs.
#pragma once
#include "protocol/codec.hpp"
#include "server/worker/lane.hpp"

namespace rgpu::server {

void send_reply(Lane& lane, int32_t status, const proto::Writer& out);

// A successful reply whose payload is `n` bytes the caller streams next,
// then the copy's final status (int32).
void begin_streamed_reply(Lane& lane, uint64_t n);

}  // namespace rgpu::server
