// NCCL through rgpu's libnccl.so.2: communicators made on the workers, the
// collectives computed there (host-test: on host memory, between workers of
// separate rgpu-server processes), results read back and checked.
//   e2e_nccl rank R N IDFILE   one rank of N, one process each; rank 0 writes the unique id to IDFILE
//   e2e_nccl all               one process: ncclCommInitAll over every device, groups across them
//   e2e_nccl survive R N IDFILE READYFILE
//                              rank 0 starts an all-reduce rank 1 never joins (its server is
//                              killed): rank 0 must get an NCCL error, not hang; rank 1 polls
//                              ncclCommGetAsyncError until its lost server shows there
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "check.h"

#define NCCL_EXPECT(expected, call)                                                                  \
  do {                                                                                               \
    ncclResult_t r_ = (call);                                                                        \
    if (r_ != (expected)) {                                                                          \
      std::printf("FAILED %s:%d: %s returned %d (%s), expected %d\n", __FILE__, __LINE__, #call, r_, \
                  ncclGetErrorString(r_), expected);                                                 \
      ++g_failures;                                                                                  \
    }                                                                                                \
  } while (0)
#define NCCL_OK(call) NCCL_EXPECT(ncclSuccess, call)

namespace {

constexpr size_t kCount = 1000;

template <typename T>
T* upload(const std::vector<T>& h) {
  T* d = nullptr;
  OK(cudaMalloc(&d, h.size() * sizeof(T)));
  OK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <typename T>
std::vector<T> download(const T* d, size_t n) {
  std::vector<T> h(n);
  OK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// Rank r's input element i.
float input(int r, size_t i) { return static_cast<float>(r + 1) * 0.5f + static_cast<float>(i % 7); }

void write_id(const char* path, const ncclUniqueId& id) {
  std::string tmp = std::string(path) + ".tmp";
  std::ofstream(tmp, std::ios::binary).write(id.internal, sizeof id.internal);
  std::rename(tmp.c_str(), path);
}

ncclUniqueId read_id(const char* path) {
  ncclUniqueId id{};
  for (int i = 0; i < 600; ++i) {
    std::ifstream f(path, std::ios::binary);
    if (f && f.read(id.internal, sizeof id.internal)) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::printf("FAILED: no unique id in %s\n", path);
  ++g_failures;
  return id;
}

ncclComm_t join(int rank, int nranks, const char* idfile) {
  ncclUniqueId id;
  if (rank == 0) {
    NCCL_OK(ncclGetUniqueId(&id));
    write_id(idfile, id);
  } else {
    id = read_id(idfile);
  }
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "e2e";
  NCCL_OK(rank % 2 ? ncclCommInitRankScalable(&comm, nranks, rank, 1, &id, &config)
                    : ncclCommInitRankConfig(&comm, nranks, id, rank, &config));
  return comm;
}

void check_collectives(ncclComm_t comm, int rank, int n, cudaStream_t stream) {
  int count = 0, me = -1, device = -1;
  NCCL_OK(ncclCommCount(comm, &count));
  NCCL_OK(ncclCommUserRank(comm, &me));
  NCCL_OK(ncclCommCuDevice(comm, &device));
  CHECK(count == n && me == rank && device == 0);

  std::vector<float> mine(kCount);
  for (size_t i = 0; i < kCount; ++i) mine[i] = input(rank, i);
  float* send = upload(mine);
  float* recv = nullptr;
  OK(cudaMalloc(&recv, kCount * n * sizeof(float)));

  // All-reduce: sum, max, avg; in place too.
  NCCL_OK(ncclAllReduce(send, recv, kCount, ncclFloat32, ncclSum, comm, stream));
  OK(cudaStreamSynchronize(stream));
  auto got = download(recv, kCount);
  for (size_t i = 0; i < kCount; ++i) {
    float want = 0;
    for (int r = 0; r < n; ++r) want += input(r, i);
    if (got[i] != want) {
      std::printf("FAILED all-reduce sum [%zu]: %f, expected %f\n", i, got[i], want);
      ++g_failures;
      break;
    }
  }
  NCCL_OK(ncclAllReduce(send, recv, kCount, ncclFloat32, ncclMax, comm, stream));
  got = download(recv, kCount);
  CHECK(got[3] == input(n - 1, 3));
  NCCL_OK(ncclAllReduce(send, recv, kCount, ncclFloat32, ncclAvg, comm, stream));
  got = download(recv, kCount);
  float avg = 0;
  for (int r = 0; r < n; ++r) avg += input(r, 5) / n;
  CHECK(std::fabs(got[5] - avg) < 1e-4f);
  std::vector<int32_t> ints(kCount, rank + 2);
  int32_t* dint = upload(ints);
  NCCL_OK(ncclAllReduce(dint, dint, kCount, ncclInt32, ncclProd, comm, stream));
  auto iprod = download(dint, kCount);
  int32_t want_prod = 1;
  for (int r = 0; r < n; ++r) want_prod *= r + 2;
  CHECK(iprod[0] == want_prod && iprod[kCount - 1] == want_prod);

  // Broadcast from the last rank, in place (ncclBcast).
  OK(cudaMemcpy(recv, send, kCount * sizeof(float), cudaMemcpyDeviceToDevice));
  NCCL_OK(ncclBcast(recv, kCount, ncclFloat32, n - 1, comm, stream));
  got = download(recv, kCount);
  CHECK(got[11] == input(n - 1, 11));

  // Reduce to rank 0 (min).
  NCCL_OK(ncclReduce(send, recv, kCount, ncclFloat32, ncclMin, 0, comm, stream));
  if (rank == 0) CHECK(download(recv, kCount)[2] == input(0, 2));

  // All-gather, reduce-scatter, all-to-all.
  NCCL_OK(ncclAllGather(send, recv, kCount, ncclFloat32, comm, stream));
  got = download(recv, kCount * n);
  for (int r = 0; r < n; ++r) CHECK(got[r * kCount + 9] == input(r, 9));
  std::vector<float> parts(kCount * n);
  for (size_t i = 0; i < parts.size(); ++i) parts[i] = static_cast<float>(rank * 1000 + i);
  float* dparts = upload(parts);
  NCCL_OK(ncclReduceScatter(dparts, recv, kCount, ncclFloat32, ncclSum, comm, stream));
  got = download(recv, kCount);
  float rs = 0;
  for (int r = 0; r < n; ++r) rs += static_cast<float>(r * 1000 + rank * kCount + 4);
  CHECK(got[4] == rs);
  NCCL_OK(ncclAlltoAll(dparts, recv, kCount, ncclFloat32, comm, stream));
  got = download(recv, kCount * n);
  for (int r = 0; r < n; ++r) CHECK(got[r * kCount + 1] == static_cast<float>(r * 1000 + rank * kCount + 1));

  // Send/receive around the ring in one group.
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclSend(send, kCount, ncclFloat32, (rank + 1) % n, comm, stream));
  NCCL_OK(ncclRecv(recv, kCount, ncclFloat32, (rank + n - 1) % n, comm, stream));
  NCCL_OK(ncclGroupEnd());
  got = download(recv, kCount);
  CHECK(got[6] == input((rank + n - 1) % n, 6));

  // A pre-multiplied sum: each rank's input times its scalar (rank + 1).
  ncclRedOp_t premul;
  float scalar = static_cast<float>(rank + 1);
  NCCL_OK(ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
  NCCL_OK(ncclAllReduce(send, recv, kCount, ncclFloat32, premul, comm, stream));
  got = download(recv, kCount);
  float pm = 0;
  for (int r = 0; r < n; ++r) pm += input(r, 8) * (r + 1);
  CHECK(std::fabs(got[8] - pm) < 1e-3f);
  NCCL_OK(ncclRedOpDestroy(premul, comm));

  // Registration of a buffer.
  void* handle = nullptr;
  NCCL_OK(ncclCommRegister(comm, recv, kCount * sizeof(float), &handle));
  NCCL_OK(ncclCommDeregister(comm, handle));

  // Refused: a count past the allocation, a made-up communicator, a bad
  // datatype; the communicator goes on working after them.
  NCCL_EXPECT(ncclInvalidArgument, ncclAllReduce(send, recv, kCount * 4, ncclFloat32, ncclSum, comm, stream));
  CHECK(std::strlen(ncclGetLastError(comm)) > 0);
  NCCL_EXPECT(ncclInvalidArgument,
              ncclAllReduce(send, recv, kCount, ncclFloat32, ncclSum, reinterpret_cast<ncclComm_t>(0x1234), stream));
  NCCL_EXPECT(ncclInvalidArgument, ncclAllReduce(send, recv, kCount, static_cast<ncclDataType_t>(77), ncclSum, comm, stream));
  NCCL_EXPECT(ncclInvalidArgument, ncclAllReduce(send, recv, kCount, ncclFloat32, static_cast<ncclRedOp_t>(40), comm, stream));
  NCCL_OK(ncclAllReduce(send, recv, kCount, ncclFloat32, ncclSum, comm, stream));

  OK(cudaFree(send));
  OK(cudaFree(recv));
  OK(cudaFree(dint));
  OK(cudaFree(dparts));
}

int rank_mode(int rank, int n, const char* idfile) {
  OK(cudaSetDevice(0));
  cudaStream_t stream;
  OK(cudaStreamCreate(&stream));
  ncclComm_t comm = join(rank, n, idfile);
  if (!comm) return finish();
  check_collectives(comm, rank, n, stream);

  // Split: even and odd ranks; a rank outside any color gets no communicator.
  ncclComm_t half = nullptr;
  NCCL_OK(ncclCommSplit(comm, rank % 2, -rank, &half, nullptr));
  int half_size = 0, half_rank = -1;
  NCCL_OK(ncclCommCount(half, &half_size));
  NCCL_OK(ncclCommUserRank(half, &half_rank));
  CHECK(half_size == (n + 1 - rank % 2) / 2);
  int32_t* one = upload(std::vector<int32_t>(4, 1));
  NCCL_OK(ncclAllReduce(one, one, 4, ncclInt32, ncclSum, half, stream));
  CHECK(download(one, 4)[0] == half_size);
  ncclComm_t none = reinterpret_cast<ncclComm_t>(0x1);
  NCCL_OK(ncclCommSplit(comm, NCCL_SPLIT_NOCOLOR, 0, &none, nullptr));
  CHECK(none == nullptr);
  NCCL_OK(ncclCommDestroy(half));

  ncclResult_t async = ncclInternalError;
  NCCL_OK(ncclCommGetAsyncError(comm, &async));
  CHECK(async == ncclSuccess);
  NCCL_OK(ncclCommFinalize(comm));
  NCCL_OK(ncclCommDestroy(comm));
  NCCL_EXPECT(ncclInvalidArgument, ncclCommGetAsyncError(comm, &async));
  int version = 0;
  NCCL_OK(ncclGetVersion(&version));
  CHECK(version == NCCL_VERSION_CODE);
  OK(cudaFree(one));
  return finish();
}

// One process, every device (of one or several servers): ncclCommInitAll,
// then collectives on all of them in one group.
int all_mode() {
  int n = 0;
  OK(cudaGetDeviceCount(&n));
  std::vector<ncclComm_t> comms(n);
  NCCL_OK(ncclCommInitAll(comms.data(), n, nullptr));
  std::vector<float*> bufs(n);
  std::vector<cudaStream_t> streams(n);
  for (int d = 0; d < n; ++d) {
    OK(cudaSetDevice(d));
    OK(cudaStreamCreate(&streams[d]));
    std::vector<float> h(kCount);
    for (size_t i = 0; i < kCount; ++i) h[i] = input(d, i);
    bufs[d] = upload(h);
    int device = -1;
    NCCL_OK(ncclCommCuDevice(comms[d], &device));
    CHECK(device == d);
  }
  NCCL_OK(ncclGroupStart());
  for (int d = 0; d < n; ++d) NCCL_OK(ncclAllReduce(bufs[d], bufs[d], kCount, ncclFloat32, ncclSum, comms[d], streams[d]));
  NCCL_OK(ncclGroupEnd());
  for (int d = 0; d < n; ++d) {
    OK(cudaSetDevice(d));
    OK(cudaStreamSynchronize(streams[d]));
    float want = 0;
    for (int r = 0; r < n; ++r) want += input(r, 3);
    CHECK(download(bufs[d], kCount)[3] == want);
  }
  // Outside a group each device's call waits for the others: NCCL says a
  // thread driving several devices must group them; a group of broadcasts
  // across the servers.
  NCCL_OK(ncclGroupStart());
  for (int d = 0; d < n; ++d) NCCL_OK(ncclBroadcast(bufs[d], bufs[d], kCount, ncclFloat32, 0, comms[d], streams[d]));
  NCCL_OK(ncclGroupEnd());
  for (int d = 0; d < n; ++d) {
    OK(cudaSetDevice(d));
    CHECK(download(bufs[d], kCount)[3] == download(bufs[0], kCount)[3]);
  }
  // A group inside a group completes at the outer end.
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclGroupStart());
  for (int d = 0; d < n; ++d) NCCL_OK(ncclAllReduce(bufs[d], bufs[d], kCount, ncclFloat32, ncclMax, comms[d], streams[d]));
  NCCL_OK(ncclGroupEnd());
  NCCL_OK(ncclGroupEnd());
  NCCL_EXPECT(ncclInvalidUsage, ncclGroupEnd());
  for (int d = 0; d < n; ++d) {
    OK(cudaSetDevice(d));
    OK(cudaFree(bufs[d]));
    NCCL_OK(ncclCommDestroy(comms[d]));
  }
  std::printf("devices=%d\n", n);
  return finish();
}

int survive_mode(int rank, int n, const char* idfile, const char* readyfile) {
  OK(cudaSetDevice(0));
  ncclComm_t comm = join(rank, n, idfile);
  if (!comm) return finish();
  float* buf = upload(std::vector<float>(kCount, 1.0f));
  if (rank != 0) {
    std::ofstream(readyfile) << "ready\n";
    ncclResult_t async = ncclSuccess;
    for (int i = 0; i < 300 && async == ncclSuccess; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      NCCL_OK(ncclCommGetAsyncError(comm, &async));
    }
    std::printf("own server lost: async error %d (%s)\n", async, ncclGetErrorString(async));
    CHECK(async == ncclSystemError);
    NCCL_EXPECT(ncclSystemError, ncclAllReduce(buf, buf, kCount, ncclFloat32, ncclSum, comm, 0));
    NCCL_OK(ncclCommAbort(comm));
    return finish();
  }
  auto t0 = std::chrono::steady_clock::now();
  ncclResult_t r = ncclAllReduce(buf, buf, kCount, ncclFloat32, ncclSum, comm, 0);
  // NVIDIA's NCCL returns at once and reports the dead peer later, as the
  // communicator's asynchronous error (host-test's fails the call itself).
  ncclResult_t async = ncclSuccess;
  for (int i = 0; i < 300 && async == ncclSuccess; ++i) {
    NCCL_OK(ncclCommGetAsyncError(comm, &async));
    if (async == ncclSuccess) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("all-reduce with a dead peer: %d (%s), async error %d, after %.1f s: %s\n", r, ncclGetErrorString(r),
              async, s, ncclGetLastError(comm));
  CHECK(r == ncclRemoteError || r == ncclSystemError || async == ncclRemoteError || async == ncclSystemError);
  CHECK(async == ncclRemoteError || async == ncclSystemError);
  NCCL_OK(ncclCommAbort(comm));
  return finish();
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "rank" && argc == 5) return rank_mode(std::atoi(argv[2]), std::atoi(argv[3]), argv[4]);
  if (mode == "all") return all_mode();
  if (mode == "survive" && argc == 6) return survive_mode(std::atoi(argv[2]), std::atoi(argv[3]), argv[4], argv[5]);
  std::fprintf(stderr, "usage: e2e_nccl rank R N IDFILE | all | survive R N IDFILE READYFILE\n");
  return 2;
}
