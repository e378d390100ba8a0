#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

#include "fuzz_targets.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "transport/shm/byte_ring.hpp"
#include "transport/shm/shared_memory.hpp"
#include "transport/shm/shm_ring_connection.hpp"
#include "transport/socket/descriptor_passing.hpp"

namespace rgpu::fuzz {
namespace {

// shm_ring_connection.cpp's layout: the control blocks' page, then the
// client-to-server ring and the server-to-client ring.
constexpr size_t kControlBytes = 4096;
constexpr size_t kRingBytes = size_t{1} << 20;
constexpr size_t kFileBytes = kControlBytes + 2 * kRingBytes;
constexpr size_t kSizes[] = {kFileBytes, kFileBytes - 4096, kFileBytes + 4096, 4096, 0};
const std::vector<uint8_t> kSecret(32, 0x5a);  // the session's join secret

// When the client shrinks its ring file.
enum Moment : uint8_t { kNever, kBeforeOffer, kAfterAttach, kAfterHeader, kMoments };

// What a client sends, collected: its join frame, made as a client makes it.
class SentBytes final : public transport::Connection {
 public:
  void send(std::span<const iovec> parts, bool) override {
    for (const iovec& v : parts) bytes.insert(bytes.end(), static_cast<const uint8_t*>(v.iov_base),
                                              static_cast<const uint8_t*>(v.iov_base) + v.iov_len);
  }
  void recv(void*, size_t) override { throw transport::TransportError("nothing to read"); }
  bool wait_readable(int) override { return false; }
  void shutdown() override {}
  int native_handle() const override { return -1; }
  std::string peer() const override { return "collector"; }
  void send_with_fd(std::span<const iovec> parts, int) override { send(parts, false); }
  int take_fd() override { return -1; }
  bool passes_descriptors() const override { return false; }
  std::vector<uint8_t> bytes;
};

void put_at(int fd, const void* p, size_t n, size_t at) {
  if (pwrite(fd, p, n, static_cast<off_t>(at)) < 0) {
    // A sealed file refuses to grow: what the client wrote is lost.
  }
}

void shrink(int fd, uint32_t to) {
  if (ftruncate(fd, to) != 0) {
    // Sealed: it cannot shrink, which is the point.
  }
}

// Runs the worker's side of a join on socket `fd`: the offer, the join
// frame, its secret. Throws TransportError or DecodeError when it refuses.
void serve_join(int fd, int file, Moment moment, uint32_t shrink_to) {
  transport::ShmRingConnection server(fd, kSecret);
  server.wait_readable(0);
  if (moment == kAfterAttach) shrink(file, shrink_to);
  auto h = proto::recv_header(server);
  if (moment == kAfterHeader) shrink(file, shrink_to);
  if (h.op != proto::kOpJoin || h.payload_len != 0) throw proto::DecodeError("not a join");
  std::vector<uint8_t> args;
  proto::recv_args(server, h, args);
  proto::Reader r(args);
  auto join = proto::Join::decode(r);
  if (!proto::same_secret(join.secret, kSecret)) throw proto::DecodeError("not this session's secret");
}

}  // namespace

// The input plays a client joining a session over shm: its offer on the
// socket (tag, join secret, a ring file sealed or not, of some size, with or
// without the descriptor), the file shrunk at some moment, control blocks
// holding what it likes, and the join frame in the ring (well formed or raw).
// The worker's side must refuse, never crash: a SIGBUS from memory shrunk
// under its mapping fails the target.
int shm_join(const uint8_t* data, size_t size) {
  proto::Reader in({data, size});
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  int file = -1;
  try {
    const uint8_t flags = in.get<uint8_t>();
    const bool sealed = flags & 1, with_descriptor = flags & 2, right_secret = flags & 4, well_formed = flags & 8,
               hang_up = flags & 16;
    const char tag = static_cast<char>(in.get<uint8_t>());
    std::vector<uint8_t> secret = kSecret;
    if (!right_secret) {
      secret.resize(in.get<uint8_t>() % 48);
      for (auto& b : secret) b = in.get<uint8_t>();
    }
    const size_t file_size = kSizes[in.get<uint8_t>() % std::size(kSizes)];
    const auto moment = static_cast<Moment>(in.get<uint8_t>() % kMoments);
    const uint32_t shrink_to = in.get<uint32_t>() % (kFileBytes + 1);
    if (sealed) {
      file = transport::create_sealed_memfd("fuzz-rings", file_size);
    } else {
      file = memfd_create("fuzz-rings", MFD_CLOEXEC);
      if (file >= 0) shrink(file, static_cast<uint32_t>(file_size));
    }
    if (file < 0) throw transport::TransportError("no memfd");
    for (int writes = in.get<uint8_t>() % 16; writes > 0; --writes) {
      const size_t at = in.get<uint16_t>() % (kControlBytes - sizeof(uint64_t));
      const uint64_t value = in.get<uint64_t>();
      put_at(file, &value, sizeof value, at);
    }
    std::vector<uint8_t> frame;
    if (well_formed) {
      SentBytes sent;
      proto::Writer w;
      proto::Join{secret, in.get<uint8_t>()}.encode(w);
      proto::send_frame(sent, proto::FrameHeader{.op = proto::kOpJoin}, w.bytes());
      frame = std::move(sent.bytes);
    } else {
      frame.resize(std::min<size_t>(in.remaining(), 4096));
      for (auto& b : frame) b = in.get<uint8_t>();
    }
    put_at(file, frame.data(), frame.size(), kControlBytes);
    const uint64_t head = frame.size();
    put_at(file, &head, sizeof head, offsetof(transport::RingControl, head));
    // Both rings closed: a read that wants more than is there ends at once.
    const uint32_t closed = 1;
    for (size_t ring = 0; ring < 2; ++ring) {
      const size_t at = ring * sizeof(transport::RingControl) + offsetof(transport::RingControl, closed);
      put_at(file, &closed, sizeof closed, at);
    }
    if (moment == kBeforeOffer) shrink(file, shrink_to);
    std::vector<char> offer{tag};
    offer.insert(offer.end(), secret.begin(), secret.end());
    if (with_descriptor) {
      transport::send_with_descriptor(sv[0], offer.data(), offer.size(), file);
    } else if (send(sv[0], offer.data(), offer.size(), MSG_NOSIGNAL) < 0) {
      // the worker finds nothing
    }
    if (hang_up) {
      close(sv[0]);
      sv[0] = -1;
    }
    const int worker_side = sv[1];
    sv[1] = -1;  // the connection owns it now
    serve_join(worker_side, file, moment, shrink_to);
  } catch (const transport::TransportError&) {
  } catch (const proto::DecodeError&) {
  }
  for (int fd : sv)
    if (fd >= 0) close(fd);
  if (file >= 0) close(file);
  return 0;
}

}  // namespace rgpu::fuzz
