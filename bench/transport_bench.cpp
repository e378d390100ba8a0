// Raw transport figures with no GPU involved, to set rgpu's copy figures
// against: 64-byte round-trip latency and bulk throughput over the same
// transport implementation rgpu uses: loopback TCP, TLS over loopback TCP
// (a throwaway certificate made with the openssl CLI), the shm transport's
// Unix socket, or ucx over loopback (whatever UCX picks; UCX_TLS narrows
// it). Bulk throughput is measured over one stream and, for tcp and tls,
// also striped over RGPU_TCP_STRIPES connections at once as rgpu stripes
// large pageable copies. Prints one JSON object.
// usage: rgpu-transport-bench [tcp|tls|shm|ucx]
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/tls/tls_connection.hpp"
#include "transport/transport.hpp"

using namespace rgpu::transport;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kBulk = 256u << 20;
constexpr int kPings = 5000, kBulkRounds = 5;

using Connections = std::vector<std::unique_ptr<Connection>>;

// Runs f(i) for each connection at once.
template <typename F>
void each(size_t n, F f) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) threads.emplace_back(f, i);
  for (auto& t : threads) t.join();
}

// The peer of bulk(): receives each round's share and acknowledges it, then
// sends it back.
void serve_bulk(Connections& conns) {
  const size_t share = kBulk / conns.size();
  each(conns.size(), [&](size_t i) {
    std::vector<char> sink(share);
    for (int r = 0; r < kBulkRounds; ++r) {
      conns[i]->recv(sink.data(), share);
      char ack = 1;
      iovec a{&ack, 1};
      conns[i]->send({&a, 1});
      iovec v{sink.data(), share};
      conns[i]->send({&v, 1});
    }
  });
}

struct Throughput {
  double send = 0, recv = 0;  // GB/s, best round
};

// kBulk bytes split evenly over the connections, each way, best of kBulkRounds.
Throughput bulk(Connections& conns) {
  const size_t share = kBulk / conns.size();
  std::vector<std::vector<char>> data(conns.size(), std::vector<char>(share, 7));
  Throughput best;
  auto gbs = [](Clock::time_point t0) { return kBulk / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9; };
  for (int r = 0; r < kBulkRounds; ++r) {
    auto t0 = Clock::now();
    each(conns.size(), [&](size_t i) {
      iovec v{data[i].data(), share};
      conns[i]->send({&v, 1});
      char ack;
      conns[i]->recv(&ack, 1);
    });
    best.send = std::max(best.send, gbs(t0));
    t0 = Clock::now();
    each(conns.size(), [&](size_t i) { conns[i]->recv(data[i].data(), share); });
    best.recv = std::max(best.recv, gbs(t0));
  }
  return best;
}

unsigned stripes() {
  const char* v = std::getenv("RGPU_TCP_STRIPES");
  long n = v && *v ? std::strtol(v, nullptr, 10) : 4;
  return static_cast<unsigned>(std::clamp<long>(n, 1, 8));  // as the client library bounds it
}

// The TLS transports' two sides, with a self-signed certificate for
// 127.0.0.1 that the client trusts; the files go once both sides have them.
struct TlsPair {
  std::unique_ptr<Transport> server, client;
};

TlsPair throwaway_tls() {
  char dir[] = "/tmp/rgpu-transport-bench-XXXXXX";
  if (!mkdtemp(dir)) throw TransportError("mkdtemp failed");
  const std::string d = dir, cert = d + "/cert.pem", key = d + "/key.pem";
  const std::string req = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
                          "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " +
                          cert + " 2>/dev/null";
  int rc = std::system(req.c_str());
  TlsPair pair;
  if (rc == 0) {
    pair.server = make_tls_server_transport({cert, key, ""});
    pair.client = make_tls_client_transport({"", "", cert});
  }
  std::system(("rm -rf " + d).c_str());
  if (rc != 0) throw TransportError("openssl req failed: is the openssl CLI installed?");
  return pair;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kind = argc > 1 ? argv[1] : "tcp";
  const bool shm = kind == "shm";
  std::unique_ptr<Transport> transport, listening;
  if (kind == "tls") {
    auto tls = throwaway_tls();
    transport = std::move(tls.client);
    listening = std::move(tls.server);
  } else if (kind == "tcp" || shm) {
    transport = shm ? make_shm_transport() : make_tcp_transport();
    listening = shm ? make_shm_transport() : make_tcp_transport();
  } else if (kind == "ucx") {
    transport = make_ucx_transport();
    listening = make_ucx_transport();
  } else {
    fprintf(stderr, "usage: rgpu-transport-bench [tcp|tls|shm|ucx]\n");
    return 2;
  }
  std::string path = "/tmp/rgpu-transport-bench-" + std::to_string(getpid()) + ".sock";
  auto listener = listening->listen(shm ? Endpoint{path, 0} : Endpoint{"127.0.0.1", 0});
  Endpoint where = shm ? Endpoint{path, 0} : Endpoint{"127.0.0.1", listener->local_endpoint().port};
  const size_t striped = kind == "tcp" || kind == "tls" ? stripes() : 0;
  std::thread server([&] {
    Connections one;
    one.push_back(listener->accept());
    char ping[64];
    for (int i = 0; i < kPings; ++i) {
      one[0]->recv(ping, sizeof ping);
      iovec v{ping, sizeof ping};
      one[0]->send({&v, 1});
    }
    serve_bulk(one);
    Connections many;
    for (size_t i = 0; i < striped; ++i) many.push_back(listener->accept());
    if (striped) serve_bulk(many);
  });
  Connections one;
  one.push_back(transport->connect(where, 2000));
  char ping[64] = {};
  std::vector<double> rtt;
  for (int i = 0; i < kPings; ++i) {
    auto t0 = Clock::now();
    iovec v{ping, sizeof ping};
    one[0]->send({&v, 1});
    one[0]->recv(ping, sizeof ping);
    rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(rtt.begin() + 500, rtt.end());
  double lat = rtt[500 + (rtt.size() - 500) / 2];
  Throughput single = bulk(one);
  // At once: a TLS server handshakes each connection at its first read.
  Connections many(striped);
  each(striped, [&](size_t i) { many[i] = transport->connect(where, 2000); });
  Throughput multi = striped ? bulk(many) : Throughput{};
  server.join();
  printf("{\"transport\": \"%s\", \"rtt64_us\": %.3f, \"bulk_send_gbs_256MB\": %.3f, \"bulk_recv_gbs_256MB\": %.3f",
         transport->name().c_str(), lat, single.send, single.recv);
  if (auto* tls = dynamic_cast<TlsConnection*>(one[0].get()))
    printf(", \"kernel_tls_send\": %s, \"kernel_tls_recv\": %s", tls->kernel_sends() ? "true" : "false",
           tls->kernel_receives() ? "true" : "false");
  if (striped)
    printf(", \"stripes\": %zu, \"striped_send_gbs_256MB\": %.3f, \"striped_recv_gbs_256MB\": %.3f", striped,
           multi.send, multi.recv);
  printf("}\n");
  return 0;
}
