#include <memory>
#include <vector>

#include "fuzz_targets.hpp"
#include "protocol/codec.hpp"
#include "transport/shm/byte_ring.hpp"
#include "transport/transport.hpp"

namespace rgpu::fuzz {
namespace {

// Small rings, so that indices wrap within a few operations.
constexpr size_t kCapacity = 61;

// One direction's ring, its control block and data in separate heap blocks
// so that the address sanitizer sees any access past either.
struct Ring {
  std::unique_ptr<transport::RingControl> control = std::make_unique<transport::RingControl>();
  std::vector<char> data = std::vector<char>(kCapacity);
  transport::ByteRing ring{control.get(), data.data(), kCapacity,
                           [] { throw transport::TransportError("peer gone"); }};
};

enum Op : uint8_t { kPeerSetsHead, kPeerSetsTail, kPeerWritesData, kRead, kWrite, kWaitReadable, kOps };

}  // namespace

// The input is a list of operations: ours (read from the incoming ring,
// write to the outgoing one) and the peer's, which may set either index of
// either ring to anything and write the rings' data. The rings are marked
// closed, so an operation that would wait ends at once instead.
int shm_ring(const uint8_t* data, size_t size) {
  Ring rings[2];  // 0: we read from it; 1: we write to it
  for (Ring& r : rings) r.control->closed = 1;
  std::vector<char> buffer(4 * kCapacity);
  proto::Reader in({data, size});
  try {
    while (in.remaining() > 0) {
      uint8_t op = in.get<uint8_t>();
      Ring& ring = rings[op & 1];
      try {
        switch ((op >> 1) % kOps) {
          case kPeerSetsHead: ring.control->head = in.get<uint64_t>(); break;
          case kPeerSetsTail: ring.control->tail = in.get<uint64_t>(); break;
          case kPeerWritesData: {
            auto bytes = in.get<uint8_t>() % kCapacity;
            auto at = in.get<uint8_t>() % (kCapacity - bytes + 1);
            for (size_t i = 0; i < bytes; ++i) ring.data[at + i] = static_cast<char>(in.get<uint8_t>());
            break;
          }
          case kRead: rings[0].ring.read(buffer.data(), in.get<uint8_t>() % buffer.size()); break;
          case kWrite: rings[1].ring.write(buffer.data(), in.get<uint8_t>() % buffer.size()); break;
          case kWaitReadable: rings[0].ring.wait_readable(std::chrono::steady_clock::now()); break;
        }
      } catch (const transport::TransportError&) {
        // A corrupted or closed ring: the connection would end; the next
        // operation tries again.
      }
    }
  } catch (const proto::DecodeError&) {
  }
  return 0;
}

}  // namespace rgpu::fuzz
