// Peer queries, peer access and peer copies between two GPUs: of one server
// (E2E_PEER=same: forwarded) or of two servers (E2E_PEER=cross: never
// peers, copies through client memory).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

int main() {
  const char* mode = std::getenv("E2E_PEER");
  bool same = !mode || std::strcmp(mode, "cross") != 0;
  int count = 0;
  OK(cudaGetDeviceCount(&count));
  CHECK(count == 2);

  int can = -1;
  OK(cudaDeviceCanAccessPeer(&can, 0, 1));
  CHECK(can == (same ? 1 : 0));
  OK(cudaDeviceCanAccessPeer(&can, 1, 0));
  CHECK(can == (same ? 1 : 0));
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaDeviceCanAccessPeer(&can, 0, 7));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceCanAccessPeer(nullptr, 0, 1));

  int value = -1;
  OK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, 0, 1));
  CHECK(value == (same ? 1 : 0));
  OK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, 0, 1));
  CHECK(value >= 0);
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, 0, 9));

  cudaAtomicOperation ops[2] = {cudaAtomicOperationIntegerAdd, cudaAtomicOperationCAS};
  unsigned caps[2] = {99, 99};
  OK(cudaDeviceGetP2PAtomicCapabilities(caps, ops, 2, 0, 1));
  CHECK(caps[0] != 99 && caps[1] != 99);
  if (!same) CHECK(caps[0] == 0 && caps[1] == 0);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceGetP2PAtomicCapabilities(caps, ops, 0, 0, 1));
  caps[0] = caps[1] = 99;
  OK(cudaDeviceGetHostAtomicCapabilities(caps, ops, 2, 1));
  CHECK(caps[0] != 99 && caps[1] != 99);

  OK(cudaSetDevice(0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceEnablePeerAccess(1, 1));
  if (same) {
    OK(cudaDeviceEnablePeerAccess(1, 0));
    EXPECT_STATUS(cudaErrorPeerAccessAlreadyEnabled, cudaDeviceEnablePeerAccess(1, 0));
    OK(cudaDeviceDisablePeerAccess(1));
    EXPECT_STATUS(cudaErrorPeerAccessNotEnabled, cudaDeviceDisablePeerAccess(1));
  } else {
    EXPECT_STATUS(cudaErrorPeerAccessUnsupported, cudaDeviceEnablePeerAccess(1, 0));
    EXPECT_STATUS(cudaErrorPeerAccessNotEnabled, cudaDeviceDisablePeerAccess(1));
  }
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaDeviceEnablePeerAccess(5, 0));

  // Peer copies: device 0 -> device 1 -> device 0, synchronous and on
  // streams of either device.
  const size_t n = 1 << 20;
  std::vector<unsigned char> pattern(n), back(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 3);
  void *d0 = nullptr, *d0b = nullptr, *d1 = nullptr;
  OK(cudaSetDevice(0));
  OK(cudaMalloc(&d0, n));
  OK(cudaMalloc(&d0b, n));
  cudaStream_t s0, s1;
  OK(cudaStreamCreate(&s0));
  OK(cudaSetDevice(1));
  OK(cudaMalloc(&d1, n));
  OK(cudaStreamCreate(&s1));
  OK(cudaMemcpy(d0, pattern.data(), n, cudaMemcpyHostToDevice));
  OK(cudaMemcpyPeer(d1, 1, d0, 0, n));
  OK(cudaMemcpy(back.data(), d1, n, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(back.data(), pattern.data(), n) == 0);

  OK(cudaMemset(d1, 0x11, n / 2));
  OK(cudaMemcpyPeerAsync(d0b, 0, d1, 1, n, s1));
  OK(cudaStreamSynchronize(s1));
  OK(cudaMemcpy(back.data(), d0b, n, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 0x11 && back[n / 2 - 1] == 0x11 && back[n / 2] == pattern[n / 2]);

  OK(cudaMemcpyPeerAsync(d1, 1, d0, 0, n, s0));
  OK(cudaStreamSynchronize(s0));
  OK(cudaMemcpy(back.data(), d1, n, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(back.data(), pattern.data(), n) == 0);

  // Copies of several chunks (between servers they cross client memory in
  // 16 MB chunks), the last one partial: by cudaMemcpyPeer and cudaMemcpy.
  const size_t big = (size_t{33} << 20) + 12345;
  std::vector<unsigned char> big_pattern(big), big_back(big);
  for (size_t i = 0; i < big; ++i) big_pattern[i] = static_cast<unsigned char>(i * 13 + (i >> 20));
  void *b0 = nullptr, *b1 = nullptr;
  OK(cudaSetDevice(0));
  OK(cudaMalloc(&b0, big));
  OK(cudaSetDevice(1));
  OK(cudaMalloc(&b1, big));
  OK(cudaMemcpy(b0, big_pattern.data(), big, cudaMemcpyHostToDevice));
  OK(cudaMemcpyPeer(b1, 1, b0, 0, big));
  OK(cudaMemcpy(big_back.data(), b1, big, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(big_back.data(), big_pattern.data(), big) == 0);
  OK(cudaMemset(b0, 0, big));
  OK(cudaMemcpy(b0, b1, big, cudaMemcpyDefault));
  OK(cudaMemcpy(big_back.data(), b0, big, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(big_back.data(), big_pattern.data(), big) == 0);
  OK(cudaFree(b0));
  OK(cudaFree(b1));

  // A stream of one device waits for an event of the other (between servers
  // through a flag the client sets once the event completed); work after the
  // wait sees what came before the event.
  cudaEvent_t on1;
  OK(cudaSetDevice(1));
  OK(cudaEventCreate(&on1));
  OK(cudaMemsetAsync(d1, 0x6b, n, s1));
  OK(cudaEventRecord(on1, s1));
  OK(cudaStreamWaitEvent(s0, on1, 0));
  OK(cudaMemcpyPeerAsync(d0b, 0, d1, 1, n, s0));
  OK(cudaStreamSynchronize(s0));
  OK(cudaSetDevice(0));
  OK(cudaMemcpy(back.data(), d0b, n, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 0x6b && back[n - 1] == 0x6b);
  OK(cudaEventDestroy(on1));

  // Copies of one device's memory on a stream of the other (cuFFT's
  // multi-GPU copies), pageable and page-locked, small and large: ordered on
  // that stream, as locally, when both GPUs are one server's; refused between
  // servers, where nothing could order them.
  void* pinned = nullptr;
  OK(cudaMallocHost(&pinned, n));
  for (size_t bytes : {size_t{4096}, n}) {
    OK(cudaMemset(d1, 0, n));
    if (!same) {
      EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyAsync(d1, pattern.data(), bytes, cudaMemcpyHostToDevice, s0));
      continue;
    }
    OK(cudaMemcpyAsync(d1, pattern.data(), bytes, cudaMemcpyHostToDevice, s0));
    std::memset(pinned, 0, n);
    OK(cudaMemcpyAsync(pinned, d1, bytes, cudaMemcpyDeviceToHost, s0));
    OK(cudaStreamSynchronize(s0));
    CHECK(std::memcmp(pinned, pattern.data(), bytes) == 0);
    OK(cudaMemcpyAsync(d0b, d1, bytes, cudaMemcpyDeviceToDevice, s1));
    OK(cudaMemcpyAsync(back.data(), d0b, bytes, cudaMemcpyDeviceToHost, s1));
    OK(cudaStreamSynchronize(s1));
    CHECK(std::memcmp(back.data(), pattern.data(), bytes) == 0);
  }
  OK(cudaFreeHost(pinned));

  // The pointers must be the named devices' memory.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyPeer(d1, 0, d0, 0, n));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyPeer(d1, 1, d0, 0, n + 1));
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaMemcpyPeer(d1, 1, d0, 4, n));

  OK(cudaFree(d1));
  OK(cudaStreamDestroy(s1));
  OK(cudaSetDevice(0));
  OK(cudaFree(d0));
  OK(cudaFree(d0b));
  OK(cudaStreamDestroy(s0));
  return finish();
}
