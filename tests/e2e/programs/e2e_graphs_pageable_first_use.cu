// A graph whose copy nodes name pageable host memory, launched, and right
// behind it calls that make CUDA wait for the whole context: a kernel's
// first launch (CUDA loads it lazily then), cudaFree, a device synchronize,
// as NVIDIA's graphMemoryNodes does. On a GPU such a wait waits for the
// graph's host nodes, so their host functions must not need the device; the
// server's host-test backend holds device work behind running host nodes
// (host_node_fence.hpp), and a staged copy whose host function calls CUDA
// hangs here: the watchdog fails the test instead.
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "check.h"

namespace {

const size_t n = 5000;  // not a multiple of the staging blocks
const unsigned kWatchdogSeconds = 60;

__global__ void first_use(unsigned char* p) { p[0] = 1; }
__global__ void other_first_use(unsigned char* p) { p[0] = 2; }

void on_watchdog(int) {
  const char text[] = "FAILED: the graph's copies of pageable memory hung\nRESULT FAIL\n";
  ssize_t ignored = write(1, text, sizeof text - 1);
  (void)ignored;
  _exit(1);
}

void fill(std::vector<unsigned char>& v, unsigned char seed) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(seed + i * 13);
}

// in -> dev -> out, both copies of pageable memory.
cudaGraph_t round_trip(unsigned char* dev, const unsigned char* in, unsigned char* out) {
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t up, down;
  OK(cudaGraphAddMemcpyNode1D(&up, g, nullptr, 0, dev, in, n, cudaMemcpyHostToDevice));
  OK(cudaGraphAddMemcpyNode1D(&down, g, &up, 1, out, dev, n, cudaMemcpyDeviceToHost));
  return g;
}

// The same copies, captured from a stream.
cudaGraph_t captured_round_trip(unsigned char* dev, const unsigned char* in, unsigned char* out) {
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g = nullptr;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemcpyAsync(dev, in, n, cudaMemcpyHostToDevice, s));
  OK(cudaMemcpyAsync(out, dev, n, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamEndCapture(s, &g));
  OK(cudaStreamDestroy(s));
  return g;
}

// Launches `g` with fresh bytes in `in`, makes CUDA wait for the context
// with `wait`, and checks what came back.
template <typename Wait>
void launch_then(cudaGraph_t g, std::vector<unsigned char>& in, std::vector<unsigned char>& out, unsigned char seed,
                 cudaStream_t s, Wait wait) {
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  fill(in, seed);
  std::fill(out.begin(), out.end(), 0);
  OK(cudaGraphLaunch(x, s));
  wait();
  OK(cudaStreamSynchronize(s));
  CHECK(out == in);
  OK(cudaGraphExecDestroy(x));
}

}  // namespace

int main() {
  signal(SIGALRM, on_watchdog);
  alarm(kWatchdogSeconds);
  unsigned char* dev;
  unsigned char* scratch;
  OK(cudaMalloc(&dev, n));
  OK(cudaMalloc(&scratch, 16));
  std::vector<unsigned char> in(n), out(n);
  cudaStream_t s, other;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));

  cudaGraph_t g = round_trip(dev, in.data(), out.data());
  // A kernel's first launch, on another stream.
  launch_then(g, in, out, 0x11, s, [&] {
    first_use<<<1, 1, 0, other>>>(scratch);
    OK(cudaGetLastError());
  });
  // cudaFree, as graphMemoryNodes frees outside the stream.
  unsigned char* freed;
  OK(cudaMalloc(&freed, 64));
  launch_then(g, in, out, 0x22, s, [&] { OK(cudaFree(freed)); });
  launch_then(g, in, out, 0x33, s, [&] { OK(cudaDeviceSynchronize()); });
  OK(cudaGraphDestroy(g));

  g = captured_round_trip(dev, in.data(), out.data());
  launch_then(g, in, out, 0x44, s, [&] {
    other_first_use<<<1, 1, 0, other>>>(scratch);
    OK(cudaGetLastError());
  });
  OK(cudaGraphDestroy(g));

  OK(cudaStreamDestroy(s));
  OK(cudaStreamDestroy(other));
  OK(cudaFree(scratch));
  OK(cudaFree(dev));

  // A device reset frees the staging with everything else; graphs made
  // after it stage their copies afresh.
  OK(cudaDeviceReset());
  OK(cudaMalloc(&dev, n));
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  g = round_trip(dev, in.data(), out.data());
  launch_then(g, in, out, 0x55, s, [] { OK(cudaDeviceSynchronize()); });
  OK(cudaGraphDestroy(g));
  OK(cudaStreamDestroy(s));
  OK(cudaFree(dev));
  alarm(0);
  return finish();
}
