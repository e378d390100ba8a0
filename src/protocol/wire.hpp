// The rgpu wire format: every message is one frame, a fixed little-endian
// header followed by encoded arguments and an optional bulk payload.
#pragma once
#include <cstdint>

namespace rgpu::proto {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian and encoded by memcpy");

constexpr uint32_t kFrameMagic = 0x55504752;  // "RGPU"
// Bumped whenever a frame, an op number or an argument layout changes.
constexpr uint32_t kProtocolVersion = 3;
constexpr uint16_t kDefaultPort = 18515;

// Arguments are small (handles, sizes, a few structs); anything large travels
// as payload, which handlers validate against the sizes in the arguments.
constexpr uint32_t kMaxArgsBytes = 1u << 20;
constexpr uint64_t kMaxPayloadBytes = 1ull << 40;

enum FrameFlags : uint32_t {
  kFlagAsync = 1u << 0,  // no reply: errors surface at the next synchronous call
};

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t op = 0;
  uint16_t device = 0;  // server-local ordinal the call runs on
  uint32_t args_len = 0;
  uint32_t flags = 0;
  uint64_t payload_len = 0;
};
static_assert(sizeof(FrameHeader) == 24);

// A reply's arguments start with the call's own status and the first error
// an earlier asynchronous call hit since the last reply (cudaSuccess if none).
struct ReplyPrefix {
  int32_t status;
  int32_t deferred;
};

}  // namespace rgpu::proto
