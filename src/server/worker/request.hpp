// A request as a handler sees it: decoded header, argument reader, and the
// bulk payload still on the connection (handlers stream it as they need).
#pragma once
#include <cstdint>
#include <span>

#include "protocol/codec.hpp"
#include "protocol/wire.hpp"
#include "server/worker/lane.hpp"
#include "server/worker/sequence_gate.hpp"

namespace rgpu::server {

class Request {
 public:
  Request(const proto::FrameHeader& header, std::span<const uint8_t> args, Lane& lane,
          SequenceGate* gate = nullptr)
      : args(args), header_(header), lane_(lane), gate_(gate), payload_left_(header.payload_len) {}

  const proto::FrameHeader& header() const { return header_; }
  bool is_async() const { return header_.flags & proto::kFlagAsync; }
  uint64_t payload_left() const { return payload_left_; }
  // Reads the next n payload bytes; throws DecodeError past the payload.
  void read_payload(void* dst, size_t n) {
    if (n > payload_left_) throw proto::DecodeError("payload shorter than the call says");
    lane_.connection().recv(dst, n);
    payload_left_ -= n;
  }
  // Reads up to n payload bytes in place (zero copy); returns how many.
  size_t read_payload_zero_copy(void* dst, size_t n) {
    if (n > payload_left_) throw proto::DecodeError("payload shorter than the call says");
    size_t got = lane_.connection().recv_zero_copy(dst, n);
    payload_left_ -= got;
    return got;
  }
  transport::Connection& connection() { return lane_.connection(); }
  Lane& lane() { return lane_; }
  // For an asynchronous request whose handler goes on after its GPU work
  // is queued: later requests may start now (see SequenceGate).
  void queued() {
    if (gate_) gate_->started(header_.seq);
  }

  proto::Reader args;

 private:
  const proto::FrameHeader& header_;
  Lane& lane_;
  SequenceGate* gate_;
  uint64_t payload_left_;
};

}  // namespace rgpu::server
