// How much one client flooding a server slows another's calls: a victim
// session times small synchronous calls alone, then while flooders open
// sessions as fast as they can, make small calls as fast as they can, or
// copy 64 MB blocks to the GPU without pause. Prints each case's victim
// latency (median and 99th percentile) and its ratio to the victim alone.
//   usage: rgpu-flood-bench HOST:PORT [SECONDS per case, default 5] [FLOODERS, default 4]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "client/core/session.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using Clock = std::chrono::steady_clock;

namespace {

std::unique_ptr<client::Session> open(const transport::Endpoint& server) {
  std::string why;
  auto s = client::Session::open(server, "", {0}, &why);
  if (!s) fprintf(stderr, "rgpu-flood-bench: %s\n", why.c_str());
  return s;
}

bool small_call(client::Session& s) {
  std::vector<uint8_t> reply;
  return s.call(proto::kOpDeviceSynchronize, 0, {}, {}, reply) == cudaSuccess;
}

struct Latency {
  double p50_us = 0, p99_us = 0;
  size_t calls = 0;
};

Latency victim(client::Session& s, double seconds) {
  std::vector<double> us;
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    auto t0 = Clock::now();
    if (!small_call(s)) break;
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  if (us.empty()) return {};
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)], us.size()};
}

// Flooding work, one loop iteration at a time, until `stop`.
using Flood = std::function<bool(client::Session*)>;

struct Case {
  const char* name;
  bool own_session;  // each flooder keeps one session (else it opens its own each time)
  Flood work;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: rgpu-flood-bench HOST:PORT [SECONDS] [FLOODERS]\n");
    return 2;
  }
  const auto server = transport::Endpoint::parse(argv[1], proto::kDefaultPort);
  const double seconds = argc > 2 ? std::atof(argv[2]) : 5;
  const int flooders = argc > 3 ? std::atoi(argv[3]) : 4;
  auto v = open(server);
  if (!v) return 2;
  small_call(*v);

  std::vector<uint8_t> block(64 << 20, 0x5a);
  const std::vector<Case> cases = {
      {"alone", true, nullptr},
      {"session flood", false,
       [&](client::Session*) {
         auto s = open(server);
         return s && small_call(*s);
       }},
      {"small-call flood", true, [](client::Session* s) { return small_call(*s); }},
      {"64 MB copy flood", true,
       [&](client::Session* s) {
         std::vector<uint8_t> reply;
         proto::Writer m;
         m.put<uint64_t>(block.size());
         if (s->call(proto::kOpMalloc, 0, m.bytes(), {}, reply) != cudaSuccess) return false;
         proto::Reader r(reply);
         uint64_t ptr = r.get<uint64_t>();
         proto::Writer h2d;
         h2d.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
         iovec part{block.data(), block.size()};
         bool ok = s->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&part, 1}, reply) == cudaSuccess;
         proto::Writer f;
         f.put<uint64_t>(ptr);
         return s->call(proto::kOpFree, 0, f.bytes(), {}, reply) == cudaSuccess && ok;
       }},
  };
  printf("victim: synchronous small calls (cudaDeviceSynchronize) through %s, %d flooders, %.0f s per case\n",
         argv[1], flooders, seconds);
  printf("%-18s %10s %10s %10s %10s %12s\n", "case", "p50 us", "p99 us", "p50 ratio", "p99 ratio", "flood ops");
  Latency alone;
  for (const Case& c : cases) {
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> ops{0}, failures{0};
    std::vector<std::thread> threads;
    if (c.work) {
      for (int i = 0; i < flooders; ++i) {
        threads.emplace_back([&] {
          std::unique_ptr<client::Session> own = c.own_session ? open(server) : nullptr;
          while (!stop) {
            if (c.work(own.get())) ++ops;
            else ++failures;
          }
        });
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the flood is under way
    }
    Latency l = victim(*v, seconds);
    stop = true;
    for (auto& t : threads) t.join();
    if (!c.work) alone = l;
    printf("%-18s %10.1f %10.1f %10.2f %10.2f %12llu%s\n", c.name, l.p50_us, l.p99_us,
           alone.p50_us ? l.p50_us / alone.p50_us : 0, alone.p99_us ? l.p99_us / alone.p99_us : 0,
           static_cast<unsigned long long>(ops.load()),
           failures ? (" (" + std::to_string(failures.load()) + " refused)").c_str() : "");
    fflush(stdout);
  }
  return 0;
}
