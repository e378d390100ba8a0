// Graph copy nodes on pageable host memory around kernels, in the patterns
// of NVIDIA's samples: simpleCudaGraphs (explicit nodes and a capture with
// cudaMemcpyDefault, a reduction into a stack variable read by a host node,
// a cloned graph), jacobiCudaGraphs (a capture per iteration ending in a
// download to a stack variable, one executable graph updated each time) and
// graphMemoryNodes (graph-allocated memory, two streams joined by events).
// Each launch must read the host input as it is then.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "corpus.h"

__global__ void square_plus(const int* in, int* out, int n, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + add;
}

__global__ void sum_into(const int* in, int n, unsigned long long* sum) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, static_cast<unsigned long long>(in[i]));
}

struct HostSum {
  const unsigned long long* result;
  unsigned long long seen = 0;
};
void CUDART_CB record_sum(void* p) {
  auto* h = static_cast<HostSum*>(p);
  h->seen = *h->result;
}

unsigned long long expected_sum(const std::vector<int>& v) {
  unsigned long long s = 0;
  for (int x : v) s += static_cast<unsigned long long>(x);
  return s;
}

int main() {
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(int);
  std::vector<int> in(n), out(n);
  int *d_in, *d_out;
  unsigned long long* d_sum;
  CK(cudaMalloc(&d_in, bytes));
  CK(cudaMalloc(&d_out, bytes));
  CK(cudaMalloc(&d_sum, sizeof *d_sum));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  uint32_t seed = 777;
  const dim3 grid((n + 255) / 256), block(256);

  // Explicit: upload, reduce, download into a stack variable, host node.
  unsigned long long result = 0;
  HostSum host_sum{&result};
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t up, zero, reduce, down, host;
  CK(cudaGraphAddMemcpyNode1D(&up, g, nullptr, 0, d_in, in.data(), bytes, cudaMemcpyHostToDevice));
  cudaMemsetParams ms{};
  ms.dst = d_sum;
  ms.elementSize = 4;
  ms.width = 2;
  ms.height = 1;
  CK(cudaGraphAddMemsetNode(&zero, g, nullptr, 0, &ms));
  int count = n;
  void* sum_args[] = {&d_in, &count, &d_sum};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(sum_into);
  kp.gridDim = grid;
  kp.blockDim = block;
  kp.kernelParams = sum_args;
  cudaGraphNode_t before_reduce[] = {up, zero};
  CK(cudaGraphAddKernelNode(&reduce, g, before_reduce, 2, &kp));
  cudaMemcpy3DParms m{};
  m.srcPtr = make_cudaPitchedPtr(d_sum, sizeof result, 1, 1);
  m.dstPtr = make_cudaPitchedPtr(&result, sizeof result, 1, 1);
  m.extent = make_cudaExtent(sizeof result, 1, 1);
  m.kind = cudaMemcpyDeviceToHost;
  CK(cudaGraphAddMemcpyNode(&down, g, &reduce, 1, &m));
  cudaHostNodeParams hp{record_sum, &host_sum};
  CK(cudaGraphAddHostNode(&host, g, &down, 1, &hp));
  cudaGraphExec_t x, cx;
  CK(cudaGraphInstantiate(&x, g, 0));
  cudaGraph_t clone;
  CK(cudaGraphClone(&clone, g));
  CK(cudaGraphInstantiate(&cx, clone, 0));
  for (int launch = 0; launch < 4; ++launch) {
    for (int& v : in) v = static_cast<int>(lcg(seed) % 1000);
    CK(cudaGraphLaunch(launch % 2 ? cx : x, s));
    CK(cudaStreamSynchronize(s));
    unsigned long long want = expected_sum(in);
    printf("explicit launch %d: sum %llu host node saw %llu\n", launch, result, host_sum.seen);
    EXPECT(result == want && host_sum.seen == want, "launch %d: sum %llu, want %llu", launch, result, want);
  }
  CK(cudaGraphExecDestroy(cx));
  CK(cudaGraphDestroy(clone));

  // The executable graph reads another pageable buffer.
  std::vector<int> in2(n, 3);
  CK(cudaGraphExecMemcpyNodeSetParams1D(x, up, d_in, in2.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaGraphLaunch(x, s));
  CK(cudaStreamSynchronize(s));
  printf("second input: sum %llu\n", result);
  EXPECT(result == 3ull * n, "second input: sum %llu", result);
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));

  // Captured with cudaMemcpyDefault: upload, square, download.
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMemcpyAsync(d_in, in.data(), bytes, cudaMemcpyDefault, s));
  square_plus<<<grid, block, 0, s>>>(d_in, d_out, n, 5);
  CK(cudaMemcpyAsync(out.data(), d_out, bytes, cudaMemcpyDefault, s));
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&x, g, 0));
  for (int launch = 0; launch < 3; ++launch) {
    for (int& v : in) v = static_cast<int>(lcg(seed) % 2000) - 1000;
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != in[i] * in[i] + 5;
    printf("captured launch %d: checksum %016llx mismatches %d\n", launch,
           static_cast<unsigned long long>(fnv1a(out.data(), bytes)), bad);
    EXPECT(bad == 0, "captured launch %d: %d mismatches", launch, bad);
  }
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));

  // A capture per iteration, one executable graph updated from each.
  unsigned long long sum = 0;
  x = nullptr;
  for (int k = 0; k < 50; ++k) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemsetAsync(d_sum, 0, sizeof sum, s));
    sum_into<<<grid, block, 0, s>>>(k % 2 ? d_in : d_out, n, d_sum);
    CK(cudaMemcpyAsync(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamEndCapture(s, &g));
    if (!x) {
      CK(cudaGraphInstantiate(&x, g, 0));
    } else {
      cudaGraphExecUpdateResultInfo info;
      CK(cudaGraphExecUpdate(x, g, &info));
      EXPECT(info.result == cudaGraphExecUpdateSuccess, "iteration %d: update result %d", k, info.result);
    }
    CK(cudaGraphDestroy(g));
    sum = 0;
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    unsigned long long want = 0;
    for (int i = 0; i < n; ++i)
      want += static_cast<unsigned long long>(k % 2 ? in[i] : in[i] * in[i] + 5);
    EXPECT(sum == want, "iteration %d: sum %llu, want %llu", k, sum, want);
  }
  printf("iterations: last sum %llu\n", sum);
  CK(cudaGraphExecDestroy(x));

  // Graph-allocated memory, two streams: upload on one, download on the other.
  cudaStream_t s2;
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t uploaded, downloaded;
  CK(cudaEventCreate(&uploaded));
  CK(cudaEventCreate(&downloaded));
  int *d_a, *d_b;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync(&d_a, bytes, s));
  CK(cudaMallocAsync(&d_b, bytes, s));
  CK(cudaMemcpyAsync(d_a, in.data(), bytes, cudaMemcpyHostToDevice, s));
  square_plus<<<grid, block, 0, s>>>(d_a, d_b, n, -1);
  CK(cudaEventRecord(uploaded, s));
  CK(cudaStreamWaitEvent(s2, uploaded, 0));
  CK(cudaMemcpyAsync(out.data(), d_b, bytes, cudaMemcpyDeviceToHost, s2));
  CK(cudaEventRecord(downloaded, s2));
  CK(cudaStreamWaitEvent(s, downloaded, 0));
  CK(cudaFreeAsync(d_a, s));
  CK(cudaFreeAsync(d_b, s));
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&x, g, 0));
  CK(cudaGraphDestroy(g));
  for (int launch = 0; launch < 2; ++launch) {
    for (int& v : in) v = static_cast<int>(lcg(seed) % 300);
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != in[i] * in[i] - 1;
    printf("graph memory launch %d: checksum %016llx mismatches %d\n", launch,
           static_cast<unsigned long long>(fnv1a(out.data(), bytes)), bad);
    EXPECT(bad == 0, "graph memory launch %d: %d mismatches", launch, bad);
  }
  CK(cudaGraphExecDestroy(x));
  CK(cudaEventDestroy(uploaded));
  CK(cudaEventDestroy(downloaded));
  CK(cudaStreamDestroy(s2));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  CK(cudaFree(d_sum));
  return finish();
}
