// Device memory at another worker's addresses (proto::kOpMallocAt, the
// ground a session's move stands on: docs/migration.md), through the
// client library's sessions with two servers: a source session allocates
// and fills memory; the target session makes memory at the same addresses,
// takes the contents, and frees each allocation alone; taken addresses and
// malformed lists are refused and the session goes on. CI runs it on the
// host-test backend, tests/gpu/migration/run_address_probe.sh on GPUs.
//   rgpu_fixed_address_check TRANSPORT HOST:PORT:GPU HOST:PORT:GPU   (source, target)
// Prints what it checks and RESULT PASS or RESULT FAIL.
#include <sys/uio.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/core/session.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += !ok;
}

struct Server {
  std::unique_ptr<client::Session> session;
  uint16_t gpu = 0;
};

Server open(const std::string& transport, const std::string& spec) {
  const size_t colon = spec.rfind(':');
  Server s;
  s.gpu = static_cast<uint16_t>(std::stoi(spec.substr(colon + 1)));
  std::string why;
  s.session = client::Session::open(transport::Endpoint::parse(spec.substr(0, colon), 0), transport, {s.gpu}, &why);
  if (!s.session) std::printf("cannot open a session with %s: %s\n", spec.c_str(), why.c_str());
  return s;
}

int32_t call(Server& s, uint16_t op, const proto::Writer& args, std::vector<uint8_t>* reply = nullptr,
             std::span<const iovec> payload = {}) {
  std::vector<uint8_t> out;
  int32_t e = s.session->call(op, s.gpu, args.bytes(), payload, out);
  if (reply) *reply = std::move(out);
  return e;
}

int32_t malloc_at(Server& s, const std::vector<std::pair<uint64_t, uint64_t>>& list, uint32_t count) {
  proto::Writer w;
  w.put<uint32_t>(count);
  for (auto [base, size] : list) w.put<uint64_t>(base).put<uint64_t>(size);
  return call(s, proto::kOpMallocAt, w);
}

int32_t malloc_at(Server& s, const std::vector<std::pair<uint64_t, uint64_t>>& list) {
  return malloc_at(s, list, static_cast<uint32_t>(list.size()));
}

int32_t free_memory(Server& s, uint64_t p) {
  proto::Writer w;
  w.put<uint64_t>(p);
  return call(s, proto::kOpFree, w);
}

int32_t upload(Server& s, uint64_t dst, const std::vector<uint8_t>& data) {
  proto::Writer w;
  w.put<uint64_t>(dst).put<uint64_t>(0).put<uint8_t>(1);
  iovec v{const_cast<uint8_t*>(data.data()), data.size()};
  return call(s, proto::kOpMemcpyHtoD, w, nullptr, {&v, 1});
}

int32_t download(Server& s, uint64_t src, std::vector<uint8_t>* data) {
  proto::Writer w;
  w.put<uint64_t>(src).put<uint64_t>(data->size()).put<uint64_t>(0);
  std::vector<uint8_t> out;
  return s.session->call_into(proto::kOpMemcpyDtoH, s.gpu, w.bytes(), data->data(), data->size(), out);
}

std::vector<uint8_t> pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 12));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: rgpu_fixed_address_check TRANSPORT HOST:PORT:GPU HOST:PORT:GPU\n");
    return 2;
  }
  Server source = open(argv[1], argv[2]), target = open(argv[1], argv[3]);
  if (!source.session || !target.session) {
    std::printf("RESULT FAIL\n");
    return 1;
  }
  // As a PyTorch-like mix: small buffers that share a page, blocks of 2 and
  // 20 MB, one of 64 MB.
  const std::vector<uint64_t> sizes = {512, 4096, 100000, 2u << 20, 20u << 20, 64u << 20, 3000};
  std::vector<std::pair<uint64_t, uint64_t>> list;
  for (size_t i = 0; i < sizes.size(); ++i) {
    proto::Writer w;
    w.put<uint64_t>(sizes[i]);
    std::vector<uint8_t> reply;
    if (call(source, proto::kOpMalloc, w, &reply) != cudaSuccess) {
      std::printf("source cudaMalloc of %llu bytes failed\nRESULT FAIL\n", static_cast<unsigned long long>(sizes[i]));
      return 1;
    }
    proto::Reader r(reply);
    const uint64_t p = r.get<uint64_t>();
    list.push_back({p, sizes[i]});
    expect(upload(source, p, pattern(sizes[i], static_cast<unsigned>(i))) == cudaSuccess, "source filled");
  }
  std::sort(list.begin(), list.end());

  expect(malloc_at(target, list) == cudaSuccess, "target made " + std::to_string(list.size()) +
                                                     " allocations at the source's addresses");
  size_t same = 0;
  for (auto [p, n] : list) {
    std::vector<uint8_t> data(n), back(n);
    if (download(source, p, &data) == cudaSuccess && upload(target, p, data) == cudaSuccess &&
        download(target, p, &back) == cudaSuccess && back == data)
      ++same;
  }
  expect(same == list.size(), "every allocation's contents moved and read back at its old address (" +
                                  std::to_string(same) + " of " + std::to_string(list.size()) + ")");
  expect(malloc_at(target, list) == cudaErrorAlreadyMapped, "the same addresses again: refused as taken");
  {
    proto::Writer w;
    w.put<uint64_t>(1u << 20);
    std::vector<uint8_t> reply;
    expect(call(target, proto::kOpMalloc, w, &reply) == cudaSuccess, "the target's own cudaMalloc still works");
    proto::Reader r(reply);
    const uint64_t own = r.get<uint64_t>();
    expect(malloc_at(target, {{own, 1u << 20}}) == cudaErrorAlreadyMapped, "its own allocation's address: taken");
    expect(free_memory(target, own) == cudaSuccess, "its own allocation freed");
  }
  const uint64_t base = list.front().first;
  expect(malloc_at(target, {}, 0) == cudaErrorInvalidValue, "an empty list: refused");
  expect(malloc_at(target, {{base, 0}}) == cudaErrorInvalidValue, "a zero size: refused");
  expect(malloc_at(target, {{base + (1ull << 40), 8192}, {base + (1ull << 40) + 4096, 8192}}) == cudaErrorInvalidValue,
         "overlapping allocations: refused");
  expect(malloc_at(target, {{base + (2ull << 40), 4096}, {base + (1ull << 40), 4096}}) == cudaErrorInvalidValue,
         "allocations out of address order: refused");
  {
    // Allocations far apart (a session moved back holds some of each server)
    // get a span each, not one over the gap.
    const uint64_t far = base - (1ull << 40), farther = far + (8ull << 30);
    expect(malloc_at(target, {{far, 4096}, {farther, 4096}}) == cudaSuccess, "allocations 8 GB apart: a span each");
    expect(free_memory(target, far) == cudaSuccess && free_memory(target, farther) == cudaSuccess,
           "and each freed alone");
  }
  expect(malloc_at(target, {{base + (1ull << 40), 4096}}, 3) == cudaErrorInvalidValue,
         "a count past the arguments: refused");

  size_t freed = 0;
  for (auto [p, n] : list) freed += free_memory(target, p) == cudaSuccess;
  expect(freed == list.size(), "each allocation freed alone");
  expect(free_memory(target, list.front().first) == cudaErrorInvalidValue, "a second free: refused");
  expect(malloc_at(target, list) == cudaSuccess, "once all are freed, the addresses can be had again");
  for (auto [p, n] : list) free_memory(target, p);
  for (auto [p, n] : list) free_memory(source, p);
  std::printf("RESULT %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
