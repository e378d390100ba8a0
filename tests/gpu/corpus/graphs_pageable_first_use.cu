// A graph of copies of pageable host memory around a kernel, launched, and
// right behind it calls that make CUDA wait for the whole context, as
// NVIDIA's graphMemoryNodes does: a kernel's first launch (with CUDA's lazy
// loading, its module loads then), cudaFree, a device synchronize. Such a
// wait waits for the graph's host nodes, so over rgpu the host function of a
// staged copy must not need the device (over tcp it hung when it did).
#include <cstdio>
#include <vector>

#include "corpus.h"

const int n = 1 << 16;

__global__ void square_plus(const int* in, int* out, int n, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + add;
}
__global__ void first_use(int* p) { p[threadIdx.x] = threadIdx.x; }
__global__ void other_first_use(int* p) { p[threadIdx.x] = 2 * threadIdx.x; }

// in -> d_in, square_plus, d_out -> out: both copies of pageable memory.
cudaGraph_t make_graph(std::vector<int>& in, std::vector<int>& out, int* d_in, int* d_out) {
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t up, kernel, down;
  CK(cudaGraphAddMemcpyNode1D(&up, g, nullptr, 0, d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  int count = n, add = 3;
  void* args[] = {&d_in, &d_out, &count, &add};
  cudaKernelNodeParams k{};
  k.func = reinterpret_cast<void*>(square_plus);
  k.gridDim = dim3((n + 255) / 256);
  k.blockDim = dim3(256);
  k.kernelParams = args;
  CK(cudaGraphAddKernelNode(&kernel, g, &up, 1, &k));
  CK(cudaGraphAddMemcpyNode1D(&down, g, &kernel, 1, out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  return g;
}

void check(const std::vector<int>& in, const std::vector<int>& out, const char* what) {
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += out[i] != in[i] * in[i] + 3;
  EXPECT(wrong == 0, "%s: %d wrong", what, wrong);
  printf("%s: checksum %016llx\n", what, static_cast<unsigned long long>(fnv1a(out.data(), n * sizeof(int))));
}

int main() {
  std::vector<int> in(n), out(n);
  int *d_in, *d_out, *scratch;
  CK(cudaMalloc(&d_in, n * sizeof(int)));
  CK(cudaMalloc(&d_out, n * sizeof(int)));
  CK(cudaMalloc(&scratch, 256 * sizeof(int)));
  cudaStream_t s, other;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  cudaGraph_t g = make_graph(in, out, d_in, d_out);
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0));

  const char* waits[] = {"first kernel launch", "cudaFree", "cudaDeviceSynchronize", "another first launch"};
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < n; ++i) in[i] = (i * 7 + round) % 1000;
    CK(cudaGraphLaunch(x, s));
    if (round == 0) first_use<<<1, 256, 0, other>>>(scratch);
    if (round == 1) {
      int* freed;
      CK(cudaMalloc(&freed, 1 << 20));
      CK(cudaFree(freed));
    }
    if (round == 2) CK(cudaDeviceSynchronize());
    if (round == 3) other_first_use<<<1, 256, 0, other>>>(scratch);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    check(in, out, waits[round]);
  }
  CK(cudaStreamSynchronize(other));
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  CK(cudaStreamDestroy(other));
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  CK(cudaFree(scratch));
  return finish();
}
