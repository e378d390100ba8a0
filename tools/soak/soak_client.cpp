// One soak session (tools/soak/soak.py): until its standard input closes,
// random valid calls, whose results are checked, mixed with invalid ones
// (pointers of no allocation, sizes past an allocation, unknown calls,
// malformed arguments, double frees), each of which must get its error
// while the session goes on. Prints "open S" once the session is open (S:
// seconds waited for it), then one JSON line of counts; exits 1 when a
// result was wrong or the session was lost.
// --malformed: one session that sends a malformed frame, which the server
// must answer by closing that connection.
//   usage: rgpu-soak-client HOST:PORT SEED PAUSE_MS  (PAUSE_MS: mean pause between steps)
//          rgpu-soak-client HOST:PORT --malformed SEED
//          rgpu-soak-client HOST:PORT --memory   (free and total bytes of GPU 0, read after a line on stdin)
#include <cuda_runtime_api.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/core/session.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "transport/transport.hpp"

using namespace rgpu;

namespace {

struct Counts {
  uint64_t calls = 0;      // calls made
  uint64_t errors = 0;     // errors returned, each the one expected
  uint64_t wrong = 0;      // a valid call failed, data came back wrong, or an invalid call passed
  uint64_t malformed = 0;  // malformed frames sent, each dropped by the server
};

// How long a client waits for its session, as the client library does.
constexpr int kOpenTimeoutMs = 60000;
// How long the server may take to close a connection after a bad frame.
constexpr int kDropTimeoutMs = 5000;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void print_counts(const Counts& c, bool lost, double open_s) {
  printf("{\"calls\": %llu, \"errors\": %llu, \"wrong\": %llu, \"malformed\": %llu, \"lost\": %d, \"open_s\": %.3f}\n",
         static_cast<unsigned long long>(c.calls), static_cast<unsigned long long>(c.errors),
         static_cast<unsigned long long>(c.wrong), static_cast<unsigned long long>(c.malformed), lost ? 1 : 0, open_s);
}

// Whether standard input has closed (or says something): soak.py ends a
// session that way once the slot's next one is open.
bool told_to_stop() {
  pollfd p{0, POLLIN, 0};
  return poll(&p, 1, 0) != 0;
}

// The next handshake frame within the time a client waits for its session.
proto::FrameHeader handshake_frame(transport::Connection& c, std::vector<uint8_t>& args) {
  if (!c.wait_readable(kOpenTimeoutMs)) throw std::runtime_error("no handshake from the server in time");
  auto h = proto::recv_header(c);
  proto::recv_args(c, h, args);
  return h;
}

// A session whose first call is a frame the server cannot trust: it must
// close that connection (or refuse the frame) and nothing else.
int malformed_session(const transport::Endpoint& server, uint32_t seed) {
  std::mt19937 rng(seed);
  Counts counts;
  counts.malformed = 1;
  const auto t0 = std::chrono::steady_clock::now();
  double open_s = 0;
  try {
    auto c = transport::make_tcp_transport()->connect(server, 5000);
    std::vector<uint8_t> args;
    handshake_frame(*c, args);
    proto::Hello hello;
    hello.protocol_version = proto::kProtocolVersion;
    hello.cuda_runtime_version = CUDART_VERSION;
    hello.gpus = {0};
    hello.client_name = "soak-malformed";
    proto::Writer w;
    hello.encode(w);
    proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
    handshake_frame(*c, args);
    open_s = seconds_since(t0);
    proto::Reader r(args);
    if (auto reply = proto::HelloReply::decode(r); reply.status != cudaSuccess)
      throw std::runtime_error("session refused: " + reply.message);
    std::vector<uint8_t> junk(std::uniform_int_distribution<size_t>(1, 200)(rng));
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    proto::FrameHeader bad{.magic = static_cast<uint32_t>(rng()), .op = proto::kOpMalloc};
    iovec parts[2] = {{&bad, sizeof bad}, {junk.data(), junk.size()}};
    c->send(parts);
    if (c->wait_readable(kDropTimeoutMs)) {
      char b;
      c->recv(&b, 1);  // the server must close, not answer
      fprintf(stderr, "soak: the server answered a bad frame\n");
    } else {
      fprintf(stderr, "soak: the server kept a connection %d ms after a bad frame\n", kDropTimeoutMs);
    }
    ++counts.wrong;
  } catch (const transport::TransportError&) {
    // closed by the server, as it should
  } catch (const std::exception& e) {
    fprintf(stderr, "rgpu-soak-client: %s (after %.1f s)\n", e.what(), seconds_since(t0));
    return 2;
  }
  print_counts(counts, false, open_s);
  return counts.wrong ? 1 : 0;
}

struct Allocation {
  uint64_t ptr;
  uint64_t size;
  std::vector<uint8_t> contents;  // what the device holds, as far as written
};

class Soak {
 public:
  Soak(client::Session& s, uint32_t seed) : s_(s), rng_(seed) {}

  void step() {
    switch (std::uniform_int_distribution<int>(0, 11)(rng_)) {
      case 0: case 1: allocate(); break;
      case 2: case 3: write_and_read_back(); break;
      case 4: set_and_read_back(); break;
      case 5: release(); break;
      case 6: expect(cudaErrorInvalidValue, copy_out(0xdead0000, 64, nullptr)); break;
      case 7: past_the_end(); break;
      case 8: expect(cudaErrorNotSupported, call(900 + std::uniform_int_distribution<int>(0, 90)(rng_), {})); break;
      case 9: expect(cudaErrorInvalidValue, call(proto::kOpMalloc, {1, 2, 3})); break;
      case 10: double_free(); break;
      case 11: expect(cudaSuccess, call(proto::kOpDeviceSynchronize, {})); break;
    }
  }
  void finish() {
    while (!live_.empty()) release();
  }
  const Counts& counts() const { return counts_; }

 private:
  cudaError_t call(uint16_t op, const std::vector<uint8_t>& args, std::vector<uint8_t>* out = nullptr) {
    std::vector<uint8_t> reply;
    ++counts_.calls;
    cudaError_t e = s_.call(op, 0, args, {}, reply);
    if (out) *out = reply;
    return e;
  }
  void expect(cudaError_t wanted, cudaError_t got) {
    if (got != wanted) {
      ++counts_.wrong;
      fprintf(stderr, "soak: got %d, expected %d\n", got, wanted);
    } else if (got != cudaSuccess) {
      ++counts_.errors;
    }
  }
  static std::vector<uint8_t> args_of(std::initializer_list<uint64_t> words) {
    proto::Writer w;
    for (uint64_t v : words) w.put<uint64_t>(v);
    return w.bytes();
  }
  cudaError_t copy_in(uint64_t ptr, const std::vector<uint8_t>& data) {
    proto::Writer w;
    w.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
    iovec v{const_cast<uint8_t*>(data.data()), data.size()};
    std::vector<uint8_t> reply;
    ++counts_.calls;
    return s_.call(proto::kOpMemcpyHtoD, 0, w.bytes(), {&v, 1}, reply);
  }
  cudaError_t copy_out(uint64_t ptr, uint64_t n, std::vector<uint8_t>* into) {
    std::vector<uint8_t> local(n), reply;
    ++counts_.calls;
    cudaError_t e = s_.call_into(proto::kOpMemcpyDtoH, 0, args_of({ptr, n, 0}), local.data(), n, reply);
    if (into) *into = std::move(local);
    return e;
  }
  Allocation* pick() {
    if (live_.empty()) return nullptr;
    return &live_[std::uniform_int_distribution<size_t>(0, live_.size() - 1)(rng_)];
  }
  std::vector<uint8_t> random_bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(rng_());
    return v;
  }

  void allocate() {
    if (live_.size() >= 16) return release();
    uint64_t size = std::uniform_int_distribution<uint64_t>(1, 1 << 20)(rng_);
    std::vector<uint8_t> out;
    cudaError_t e = call(proto::kOpMalloc, args_of({size}), &out);
    expect(cudaSuccess, e);
    if (e != cudaSuccess) return;
    proto::Reader r(out);
    uint64_t ptr = r.get<uint64_t>();
    // A freed address may come back: it is no longer one to free twice.
    std::erase(freed_, ptr);
    live_.push_back({ptr, size, {}});
  }
  void write_and_read_back() {
    Allocation* a = pick();
    if (!a) return allocate();
    a->contents = random_bytes(a->size);
    expect(cudaSuccess, copy_in(a->ptr, a->contents));
    std::vector<uint8_t> back;
    expect(cudaSuccess, copy_out(a->ptr, a->size, &back));
    if (back != a->contents) {
      ++counts_.wrong;
      fprintf(stderr, "soak: %llu bytes read back differ\n", static_cast<unsigned long long>(a->size));
    }
  }
  void set_and_read_back() {
    Allocation* a = pick();
    if (!a) return allocate();
    uint8_t value = static_cast<uint8_t>(rng_());
    proto::Writer w;
    w.put<uint64_t>(a->ptr).put<int32_t>(value).put<uint64_t>(a->size).put<uint64_t>(0);
    expect(cudaSuccess, call(proto::kOpMemset, w.bytes()));
    a->contents.assign(a->size, value);
    std::vector<uint8_t> back;
    expect(cudaSuccess, copy_out(a->ptr, a->size, &back));
    if (back != a->contents) ++counts_.wrong;
  }
  void release() {
    if (live_.empty()) return;
    expect(cudaSuccess, call(proto::kOpFree, args_of({live_.back().ptr})));
    freed_.push_back(live_.back().ptr);
    live_.pop_back();
  }
  void past_the_end() {
    Allocation* a = pick();
    if (!a) return allocate();
    expect(cudaErrorInvalidValue, copy_out(a->ptr, a->size + 1, nullptr));
    expect(cudaErrorInvalidValue, copy_in(a->ptr + 1, std::vector<uint8_t>(a->size)));
  }
  void double_free() {
    if (freed_.empty()) return release();
    expect(cudaErrorInvalidValue, call(proto::kOpFree, args_of({freed_.back()})));
  }
  client::Session& s_;
  std::mt19937 rng_;
  std::vector<Allocation> live_;
  std::vector<uint64_t> freed_;
  Counts counts_;
};

}  // namespace

int main(int argc, char** argv) {
  const bool memory = argc == 3 && std::string(argv[2]) == "--memory";
  const bool malformed = argc == 4 && std::string(argv[2]) == "--malformed";
  if (!memory && !malformed && argc != 4) {
    fprintf(stderr, "usage: rgpu-soak-client HOST:PORT SEED PAUSE_MS | HOST:PORT --malformed SEED | "
                    "HOST:PORT --memory\n");
    return 2;
  }
  auto server = transport::Endpoint::parse(argv[1], proto::kDefaultPort);
  if (malformed) return malformed_session(server, static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)));
  std::string why;
  // How long the server took to give this client a session: under load, the
  // wait for a worker to start (its CUDA context) shows here.
  const auto t0 = std::chrono::steady_clock::now();
  auto s = client::Session::open(server, "", {0}, &why);
  const double open_s = seconds_since(t0);
  if (!s) {
    fprintf(stderr, "rgpu-soak-client: %s (after %.1f s)\n", why.c_str(), open_s);
    return 2;
  }
  if (memory) {
    // Read when soak.py says (a line on standard input): once the worker
    // start this session set off is over.
    printf("open\n");
    fflush(stdout);
    if (getchar() == EOF) return 2;
    std::vector<uint8_t> reply;
    if (s->call(proto::kOpMemGetInfo, 0, {}, {}, reply) != cudaSuccess) return 2;
    proto::Reader r(reply);
    uint64_t free = r.get<uint64_t>(), total = r.get<uint64_t>();
    printf("{\"free\": %llu, \"total\": %llu}\n", static_cast<unsigned long long>(free),
           static_cast<unsigned long long>(total));
    return 0;
  }
  // soak.py starts the next session once this one is open.
  printf("open %.3f\n", open_s);
  fflush(stdout);
  const uint32_t seed = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  std::mt19937 pause_rng(seed + 1);
  std::uniform_int_distribution<int> pause_ms(0, 2 * std::atoi(argv[3]));
  Soak soak(*s, seed);
  while (!told_to_stop() && !s->dead()) {
    soak.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(pause_rng)));
  }
  if (!s->dead()) soak.finish();
  print_counts(soak.counts(), s->dead(), open_s);
  return soak.counts().wrong || s->dead() ? 1 : 0;
}
