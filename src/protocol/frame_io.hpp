// Reading and writing whole frames over a transport connection.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace rgpu::proto {

// Sends header + args + payload parts as one frame; fills in the lengths.
void send_frame(transport::Connection& c, FrameHeader h, std::span<const uint8_t> args,
                std::span<const iovec> payload = {});

// Receives and checks a header (magic, argument size). A bad header means the
// stream is out of sync, so it throws DecodeError and the caller drops the
// connection.
FrameHeader recv_header(transport::Connection& c);

void recv_args(transport::Connection& c, const FrameHeader& h, std::vector<uint8_t>& args);

// Reads and drops n bytes, to stay in sync after refusing a payload.
void discard(transport::Connection& c, uint64_t n);

}  // namespace rgpu::proto
