#include "byte_stream_connection.hpp"

#include <cstring>

namespace rgpu::fuzz {

void ByteStreamConnection::send(std::span<const iovec> parts, bool) {
  for (const iovec& v : parts) sent_ += v.iov_len;
}

void ByteStreamConnection::recv(void* dst, size_t len) {
  if (len > bytes_left()) {
    at_ = input_.size();
    throw transport::TransportError("connection closed");
  }
  std::memcpy(dst, input_.data() + at_, len);
  at_ += len;
}

// The descriptor stays with the caller, who closes it once sent.
void ByteStreamConnection::send_with_fd(std::span<const iovec> parts, int) { send(parts); }

}  // namespace rgpu::fuzz
