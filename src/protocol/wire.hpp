// The rgpu wire format: every message is one frame, a fixed little-endian
// header followed by encoded arguments and an optional bulk payload.
#pragma once
#include <cstdint>

namespace rgpu::proto {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian and encoded by memcpy");

constexpr uint32_t kFrameMagic = 0x55504752;  // "RGPU"
// Bumped whenever a frame, an op number or an argument layout changes.
constexpr uint32_t kProtocolVersion = 12;
constexpr uint16_t kDefaultPort = 18515;
// Where rgpu-server --ucx-port conventionally listens (it is off unless given).
constexpr uint16_t kDefaultUcxPort = 18516;

// Arguments are small (handles, sizes, a few structs); anything large travels
// as payload, which handlers validate against the sizes in the arguments.
constexpr uint32_t kMaxArgsBytes = 1u << 20;
constexpr uint64_t kMaxPayloadBytes = 1ull << 40;
// The largest device-to-host copy the client may leave in flight (answered
// asynchronous call): the worker stages all of it at once.
constexpr uint64_t kMaxQueuedDownload = 64ull << 20;
// The most events one creation makes (clients make them ahead in batches).
constexpr uint32_t kMaxEventBatch = 64;

enum FrameFlags : uint32_t {
  kFlagAsync = 1u << 0,  // no reply: errors surface at the next synchronous call
  // With kFlagAsync: ordered as an asynchronous call (it counts as started
  // once queued on the GPU), yet answered: with its status, or with the data
  // of a device-to-host copy.
  kFlagAnswer = 1u << 1,
  // A descriptor travels with the frame (shm): the worker closes it if no
  // handler takes it. Only such frames cost the worker a look for one.
  kFlagDescriptor = 1u << 2,
};
// FrameHeader::flags bits 8 to 15: how many requests numbered just before
// this one are parts of the same copy (the stripes of one asynchronous copy,
// sent on several connections at once). Each part may start once the request
// before the first part has; a later request waits for all of them.
constexpr uint32_t kGroupShift = 8;
constexpr unsigned kMaxPartsBefore = 0xff;
constexpr uint32_t group_flags(unsigned parts_before) { return (parts_before & kMaxPartsBefore) << kGroupShift; }
constexpr unsigned parts_before(uint32_t flags) { return (flags >> kGroupShift) & kMaxPartsBefore; }

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t op = 0;
  // Server-local ordinal the call runs on (low byte) and the session slot of
  // the green context it runs in (high byte; 0: the device's primary context).
  uint16_t device = 0;
  uint32_t args_len = 0;
  uint32_t flags = 0;
  uint64_t payload_len = 0;
  // A client's requests to one server are numbered across all its
  // connections (one per application thread), so the worker starts them in
  // the order the application issued them; 0: not ordered (handshakes).
  uint64_t seq = 0;
};
static_assert(sizeof(FrameHeader) == 32);

// FrameHeader::device: the ordinal and the green context slot.
constexpr uint16_t header_device(uint16_t ordinal, uint16_t green_slot) {
  return static_cast<uint16_t>((ordinal & 0xff) | (green_slot << 8));
}
constexpr uint16_t header_ordinal(uint16_t device) { return device & 0xff; }
constexpr uint16_t header_green_slot(uint16_t device) { return device >> 8; }

// A reply's arguments start with the call's own status and the first error
// an earlier asynchronous call hit since the last reply (cudaSuccess if none).
struct ReplyPrefix {
  int32_t status;
  int32_t deferred;
};

}  // namespace rgpu::proto
