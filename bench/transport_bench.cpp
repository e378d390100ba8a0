// Raw transport figures with no GPU involved, to set rgpu's copy figures
// against: 64-byte round-trip latency and one-stream bulk throughput over
// the same transport implementation rgpu uses: loopback TCP, or the shm
// transport's Unix socket. Prints one JSON object.
// usage: rgpu-transport-bench [tcp|shm]
#include <unistd.h>

#include <algorithm>
#include <string>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "transport/transport.hpp"

using namespace rgpu::transport;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  bool shm = argc > 1 && std::string(argv[1]) == "shm";
  auto tcp = shm ? make_shm_transport() : make_tcp_transport();
  std::string path = "/tmp/rgpu-transport-bench-" + std::to_string(getpid()) + ".sock";
  auto listener = tcp->listen(shm ? Endpoint{path, 0} : Endpoint{"127.0.0.1", 0});
  Endpoint where = shm ? Endpoint{path, 0} : Endpoint{"127.0.0.1", listener->local_endpoint().port};
  constexpr size_t kBulk = 256u << 20;
  constexpr int kPings = 5000, kBulkRounds = 5;
  std::thread server([&] {
    auto c = listener->accept();
    char ping[64];
    for (int i = 0; i < kPings; ++i) {
      c->recv(ping, sizeof ping);
      iovec v{ping, sizeof ping};
      c->send({&v, 1});
    }
    std::vector<char> sink(kBulk);
    for (int r = 0; r < 2 * kBulkRounds; ++r) {
      if (r % 2 == 0) {
        c->recv(sink.data(), sink.size());
        char ack = 1;
        iovec v{&ack, 1};
        c->send({&v, 1});
      } else {
        iovec v{sink.data(), sink.size()};
        c->send({&v, 1});
      }
    }
  });
  auto c = tcp->connect(where, 2000);
  char ping[64] = {};
  std::vector<double> rtt;
  for (int i = 0; i < kPings; ++i) {
    auto t0 = Clock::now();
    iovec v{ping, sizeof ping};
    c->send({&v, 1});
    c->recv(ping, sizeof ping);
    rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(rtt.begin() + 500, rtt.end());
  double lat = rtt[500 + (rtt.size() - 500) / 2];
  std::vector<char> data(kBulk, 7);
  double best_send = 0, best_recv = 0;
  for (int r = 0; r < kBulkRounds; ++r) {
    auto t0 = Clock::now();
    iovec v{data.data(), data.size()};
    c->send({&v, 1});
    char ack;
    c->recv(&ack, 1);
    best_send = std::max(best_send, kBulk / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9);
    t0 = Clock::now();
    c->recv(data.data(), data.size());
    best_recv = std::max(best_recv, kBulk / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9);
  }
  server.join();
  printf("{\"transport\": \"%s\", \"rtt64_us\": %.3f, \"bulk_send_gbs_256MB\": %.3f, \"bulk_recv_gbs_256MB\": %.3f}\n",
         tcp->name().c_str(), lat, best_send, best_recv);
  return 0;
}
