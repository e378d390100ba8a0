// Sending replies: status, the pending asynchronous error, outputs.
#pragma once
#include "protocol/codec.hpp"
#include "server/worker/lane.hpp"

namespace rgpu::server {

// A successful reply carries lane.reply_fd along when a handler set one.
void send_reply(Lane& lane, int32_t status, const proto::Writer& out);
// Closes a descriptor a handler set that no reply carried.
void drop_reply_fd(Lane& lane);

// A successful reply whose payload is `n` bytes the caller streams next,
// then the copy's final status (int32).
void begin_streamed_reply(Lane& lane, uint64_t n);

}  // namespace rgpu::server
