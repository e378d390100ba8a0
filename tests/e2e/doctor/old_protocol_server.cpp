// A stand-in for an rgpu-server of the protocol before this one, for
// `rgpu doctor`'s test: it answers every hello as such a server does, with
// its own protocol version and a refusal.
//   usage: old_protocol_server PORT
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/message_io.hpp"
#include "protocol/ops.hpp"

int main(int argc, char** argv) {
  using namespace rgpu;
  if (argc != 2) {
    fprintf(stderr, "usage: old_protocol_server PORT\n");
    return 2;
  }
  auto tcp = transport::make_tcp_transport();
  auto listener = tcp->listen(transport::Endpoint{"127.0.0.1", static_cast<uint16_t>(atoi(argv[1]))});
  const uint32_t old_version = proto::kProtocolVersion - 1;
  for (;;) {
    auto conn = listener->accept();
    try {
      proto::send_message(*conn, proto::kOpChallenge, proto::Challenge{});
      auto header = proto::recv_header(*conn);
      std::vector<uint8_t> args;
      proto::recv_args(*conn, header, args);
      proto::Reader r(args);
      const auto hello = proto::Hello::decode(r);
      proto::HelloReply reply;
      reply.status = cudaErrorInvalidValue;
      reply.protocol_version = old_version;
      reply.message = "protocol version " + std::to_string(hello.protocol_version) + " is not " +
                      std::to_string(old_version);
      proto::send_message(*conn, proto::kOpHello, reply);
    } catch (const std::exception& e) {
      fprintf(stderr, "old_protocol_server: %s\n", e.what());
    }
  }
}
