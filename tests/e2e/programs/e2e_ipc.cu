// CUDA IPC between two application processes (this program and a copy of
// it it starts), each served by a worker of its own: the child opens the
// parent's allocation and event, reads the parent's data and writes its
// own, which the parent then reads. Bogus handles are refused clearly.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

static const size_t kBytes = 256 * 1024;

static std::string to_hex(const char* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(p[i]));
    s += b;
  }
  return s;
}

static void from_hex(const char* hex, char* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = static_cast<char>(v);
  }
}

static unsigned char pattern(size_t i) { return static_cast<unsigned char>(i * 29 + 3); }

static int child(const char* mem_hex, const char* event_hex) {
  cudaIpcMemHandle_t mh;
  cudaIpcEventHandle_t eh;
  from_hex(mem_hex, mh.reserved, sizeof mh.reserved);
  from_hex(event_hex, eh.reserved, sizeof eh.reserved);
  unsigned char* shared = nullptr;
  OK(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&shared), mh, cudaIpcMemLazyEnablePeerAccess));
  std::vector<unsigned char> back(kBytes);
  OK(cudaMemcpy(back.data(), shared, kBytes, cudaMemcpyDeviceToHost));
  bool same = true;
  for (size_t i = 0; i < kBytes; ++i) same &= back[i] == pattern(i);
  CHECK(same);
  OK(cudaMemset(shared, 0x6b, kBytes / 2));
  cudaEvent_t event;
  OK(cudaIpcOpenEventHandle(&event, eh));
  OK(cudaEventRecord(event, 0));
  OK(cudaEventSynchronize(event));
  OK(cudaDeviceSynchronize());
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(shared));  // closed, not freed, by the importer
  OK(cudaIpcCloseMemHandle(shared));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaIpcCloseMemHandle(shared));
  OK(cudaEventDestroy(event));
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);

  unsigned char* d = nullptr;
  OK(cudaMalloc(&d, kBytes));
  std::vector<unsigned char> data(kBytes);
  for (size_t i = 0; i < kBytes; ++i) data[i] = pattern(i);
  OK(cudaMemcpy(d, data.data(), kBytes, cudaMemcpyHostToDevice));
  cudaIpcMemHandle_t mh;
  OK(cudaIpcGetMemHandle(&mh, d + 100));  // any address of the allocation names it
  cudaEvent_t event;
  OK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventInterprocess));
  cudaIpcEventHandle_t eh;
  OK(cudaIpcGetEventHandle(&eh, event));

  std::string mem_hex = to_hex(mh.reserved, sizeof mh.reserved);
  std::string event_hex = to_hex(eh.reserved, sizeof eh.reserved);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", mem_hex.c_str(), event_hex.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The child's writes are in this process's allocation.
  std::vector<unsigned char> back(kBytes);
  OK(cudaMemcpy(back.data(), d, kBytes, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 0x6b && back[kBytes / 2 - 1] == 0x6b && back[kBytes / 2] == pattern(kBytes / 2));

  // Bogus handles: another token, another server, not a handle at all.
  void* p = nullptr;
  cudaIpcMemHandle_t other = mh;
  other.reserved[20] ^= 0x55;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaIpcOpenMemHandle(&p, other, cudaIpcMemLazyEnablePeerAccess));
  other = mh;
  other.reserved[9] ^= 0x55;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaIpcOpenMemHandle(&p, other, cudaIpcMemLazyEnablePeerAccess));
  std::memset(other.reserved, 0x11, sizeof other.reserved);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaIpcOpenMemHandle(&p, other, cudaIpcMemLazyEnablePeerAccess));
  cudaIpcEventHandle_t wrong_kind;
  std::memcpy(wrong_kind.reserved, mh.reserved, sizeof mh.reserved);
  cudaEvent_t e2;
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaIpcOpenEventHandle(&e2, wrong_kind));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaIpcGetMemHandle(&mh, data.data()));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaIpcCloseMemHandle(d));

  OK(cudaEventDestroy(event));
  OK(cudaFree(d));
  return finish();
}
