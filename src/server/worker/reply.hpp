// Sending replies: status, the pending asynchronous error, outputs.
#pragma once
#include "protocol/codec.hpp"
#include "server/worker/session_context.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

void send_reply(transport::Connection& c, SessionContext& s, int32_t status, const proto::Writer& out);

// A successful reply whose payload is `n` bytes the caller streams next,
// then the copy's final status (int32).
void begin_streamed_reply(transport::Connection& c, SessionContext& s, uint64_t n);

}  // namespace rgpu::server
