// Peer copies between devices 0 and 1 (cudaMemcpyPeer, both directions), in
// GB/s: locally, GPUs of one host copy over NVLink or PCIe (peer access
// enabled where the driver offers it, as multi-GPU programs do); through
// rgpu, devices of two servers are never peers and the copy goes through
// the application's machine. Every size's copy is checked once.
//
// usage: peer_copy_bench [--max-bytes N] [--seconds S]
// Prints a table and, last before the verdict, one JSON object:
//   {"peer_access": 0|1, "bw": {"0to1": {"<bytes>": GB/s, ...}, "1to0": {...}}}
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.h"

using Clock = std::chrono::steady_clock;

// A copy of n bytes from src (on device `from`) to dst arrives intact.
bool copy_is_exact(void* dst, int to, void* src, int from, size_t n) {
  std::vector<unsigned char> pattern(n), back(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<unsigned char>(i * 131 + from * 7 + n);
  CK(cudaMemcpy(src, pattern.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemset(dst, 0, n));
  CK(cudaMemcpyPeer(dst, to, src, from, n));
  CK(cudaMemcpy(back.data(), dst, n, cudaMemcpyDeviceToHost));
  return std::memcmp(pattern.data(), back.data(), n) == 0;
}

// Best of the copies that fit in `budget` seconds (at least 3).
double bandwidth_gbs(void* dst, int to, void* src, int from, size_t n, double budget) {
  CK(cudaMemcpyPeer(dst, to, src, from, n));
  double best = 0, spent = 0;
  for (int i = 0; i < 3 || (spent < budget && i < 1000); ++i) {
    auto t0 = Clock::now();
    CK(cudaMemcpyPeer(dst, to, src, from, n));
    // A copy between devices may return before it is done: timed to its end.
    for (int d : {from, to}) {
      CK(cudaSetDevice(d));
      CK(cudaDeviceSynchronize());
    }
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    spent += s;
    best = std::max(best, n / s / 1e9);
  }
  return best;
}

int main(int argc, char** argv) {
  size_t max_bytes = size_t{256} << 20;
  double seconds = 0.3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max-bytes")) max_bytes = std::strtoull(argv[i + 1], nullptr, 0);
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else {
      fprintf(stderr, "peer_copy_bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  int devices = 0;
  CK(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    fprintf(stderr, "peer_copy_bench: needs two devices, sees %d\n", devices);
    printf("RESULT FAIL\n");
    return 1;
  }
  int peer = 0;
  CK(cudaDeviceCanAccessPeer(&peer, 0, 1));
  void* buf[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    if (peer) CK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CK(cudaMalloc(&buf[d], max_bytes));
  }
  printf("peer_copy_bench: devices 0 and 1, peer access %s\n", peer ? "enabled" : "not offered");
  printf("%12s %12s %12s\n", "bytes", "0->1 GB/s", "1->0 GB/s");
  bool ok = true;
  std::string json[2];
  for (size_t n = size_t{1} << 20; n <= max_bytes; n *= 4) {
    double gbs[2];
    for (int from = 0; from < 2; ++from) {
      int to = 1 - from;
      ok = copy_is_exact(buf[to], to, buf[from], from, n) && ok;
      gbs[from] = bandwidth_gbs(buf[to], to, buf[from], from, n, seconds);
      char cell[64];
      snprintf(cell, sizeof cell, "%s\"%zu\": %.3f", json[from].empty() ? "" : ", ", n, gbs[from]);
      json[from] += cell;
    }
    printf("%12zu %12.2f %12.2f\n", n, gbs[0], gbs[1]);
  }
  for (int d = 0; d < 2; ++d) CK(cudaFree(buf[d]));
  printf("{\"peer_access\": %d, \"bw\": {\"0to1\": {%s}, \"1to0\": {%s}}}\n", peer, json[0].c_str(), json[1].c_str());
  printf("RESULT %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
