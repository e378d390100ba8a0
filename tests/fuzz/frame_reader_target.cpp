#include "byte_stream_connection.hpp"
#include "fuzz_targets.hpp"
#include "protocol/frame_io.hpp"

namespace rgpu::fuzz {

int frame_reader(const uint8_t* data, size_t size) {
  ByteStreamConnection conn({data, size});
  std::vector<uint8_t> args;
  try {
    for (;;) {
      proto::FrameHeader h = proto::recv_header(conn);
      proto::recv_args(conn, h, args);
      proto::discard(conn, h.payload_len);
    }
  } catch (const proto::DecodeError&) {
  } catch (const transport::TransportError&) {
  }
  return 0;
}

}  // namespace rgpu::fuzz
