#include "byte_stream_connection.hpp"
#include "fuzz_targets.hpp"
#include "host_test_backend.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "server/worker/session_handshake.hpp"

namespace rgpu::fuzz {
namespace {

// The client's side: the frame's arguments as each message it reads.
template <typename M>
void decode_as(std::span<const uint8_t> args) {
  try {
    proto::Reader r(args);
    M::decode(r);
  } catch (const proto::DecodeError&) {
  }
}

void client_reads(const uint8_t* data, size_t size) {
  ByteStreamConnection conn({data, size});
  std::vector<uint8_t> args;
  try {
    proto::FrameHeader h = proto::recv_header(conn);
    proto::recv_args(conn, h, args);
  } catch (const proto::DecodeError&) {
    return;
  } catch (const transport::TransportError&) {
    return;
  }
  decode_as<proto::Challenge>(args);
  decode_as<proto::HelloReply>(args);
  decode_as<proto::JoinReply>(args);
}

template <typename Serve>
void worker_reads(const uint8_t* data, size_t size, Serve serve) {
  ByteStreamConnection conn({data, size});
  try {
    serve(conn);
  } catch (const proto::DecodeError&) {
  } catch (const transport::TransportError&) {
  }
}

}  // namespace

int handshake(const uint8_t* data, size_t size) {
  server::Backend& backend = host_test_backend();
  const server::JoinPoint join{{"", 1}, std::vector<uint8_t>(32, 7)};
  for (const char* token : {"", "a token"}) {
    server::SessionLimits limits{{0, 1}, "", token};
    worker_reads(data, size,
                 [&](transport::Connection& c) { server::open_session(backend, c, limits, [&] { return join; }); });
  }
  worker_reads(data, size, [&](transport::Connection& c) {
    if (server::read_join(c, join.secret)) server::admit_join(c);
  });
  client_reads(data, size);
  return 0;
}

}  // namespace rgpu::fuzz
