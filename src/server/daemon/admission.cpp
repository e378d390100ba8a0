#include "server/daemon/admission.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace rgpu::server {
namespace {

// Each message is a 16-bit length and that many bytes, in one write.
constexpr size_t kMaxMessage = 1024;
constexpr int kAnswerTimeoutMs = 10000;

bool write_message(int channel, const std::string& text) {
  std::string frame(2, '\0');
  uint16_t n = static_cast<uint16_t>(std::min(text.size(), kMaxMessage));
  frame[0] = static_cast<char>(n & 0xff);
  frame[1] = static_cast<char>(n >> 8);
  frame.append(text, 0, n);
  ssize_t w;
  do {
    w = write(channel, frame.data(), frame.size());
  } while (w < 0 && errno == EINTR);
  return w == static_cast<ssize_t>(frame.size());
}

std::optional<std::string> read_message(int channel) {
  char buf[2 + kMaxMessage];
  ssize_t r;
  do {
    r = read(channel, buf, sizeof buf);
  } while (r < 0 && errno == EINTR);
  if (r < 2) return std::nullopt;
  size_t n = static_cast<uint8_t>(buf[0]) | static_cast<size_t>(static_cast<uint8_t>(buf[1])) << 8;
  if (n > kMaxMessage || static_cast<size_t>(r) != 2 + n) return std::nullopt;
  return std::string(buf + 2, n);
}

}  // namespace

std::string ask_admission(int channel, const std::string& identity) {
  if (!write_message(channel, identity)) return "the server cannot admit sessions now";
  pollfd p{channel, POLLIN, 0};
  int ready;
  do {
    ready = poll(&p, 1, kAnswerTimeoutMs);
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return "the server did not admit the session in time";
  auto answer = read_message(channel);
  return answer ? *answer : "the server cannot admit sessions now";
}

std::optional<std::string> read_admission_request(int channel) { return read_message(channel); }

void answer_admission(int channel, const std::string& refusal) { write_message(channel, refusal); }

}  // namespace rgpu::server
