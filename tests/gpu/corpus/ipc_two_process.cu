// CUDA IPC between two processes: this program exports an allocation and
// an event, starts a copy of itself that opens both, checks the data,
// transforms it with a kernel and records the event; the parent then sees
// the child's results in its own allocation.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "corpus.h"

__global__ void twice_plus_one(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * 2 + 1;
}

static const int kN = 1 << 20;

static std::string hex(const char* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(p[i]));
    s += b;
  }
  return s;
}

static void unhex(const char* h, char* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    sscanf(h + 2 * i, "%2x", &v);
    out[i] = static_cast<char>(v);
  }
}

static int child(const char* mem, const char* ev) {
  cudaIpcMemHandle_t mh;
  cudaIpcEventHandle_t eh;
  unhex(mem, mh.reserved, sizeof mh.reserved);
  unhex(ev, eh.reserved, sizeof eh.reserved);
  int* d;
  CK(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&d), mh, cudaIpcMemLazyEnablePeerAccess));
  cudaEvent_t done;
  CK(cudaIpcOpenEventHandle(&done, eh));
  std::vector<int> h(kN);
  CK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < kN; ++i) bad += h[i] != i % 777;
  twice_plus_one<<<kN / 256, 256>>>(d, kN);
  CK(cudaEventRecord(done, 0));
  CK(cudaDeviceSynchronize());
  CK(cudaIpcCloseMemHandle(d));
  CK(cudaEventDestroy(done));
  return bad == 0 ? 0 : 3;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);
  int* d;
  CK(cudaMalloc(&d, kN * sizeof(int)));
  std::vector<int> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = i % 777;
  CK(cudaMemcpy(d, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t done;
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming | cudaEventInterprocess));
  cudaIpcMemHandle_t mh;
  cudaIpcEventHandle_t eh;
  CK(cudaIpcGetMemHandle(&mh, d));
  CK(cudaIpcGetEventHandle(&eh, done));
  std::string mem = hex(mh.reserved, sizeof mh.reserved), ev = hex(eh.reserved, sizeof eh.reserved);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", mem.c_str(), ev.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  printf("child exit code: %d\n", code);
  EXPECT(code == 0, "child failed");
  CK(cudaEventSynchronize(done));
  CK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < kN; ++i) bad += h[i] != (i % 777) * 2 + 1;
  EXPECT(bad == 0, "%d wrong", bad);
  printf("child's kernel seen by the parent: mismatches=%d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(h.data(), kN * sizeof(int)));
  CK(cudaEventDestroy(done));
  CK(cudaFree(d));
  return finish();
}
