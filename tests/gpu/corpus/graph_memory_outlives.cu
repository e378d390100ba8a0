// What NVIDIA's graphMemoryFootprint and graphConditionalNodes samples rely
// on: memory a graph's allocation node makes and no free node frees outlives
// the launch (kernels, copies and memsets use it, cudaFree frees it, once,
// even after the graph is destroyed); a capture into an existing graph (here
// a conditional node's body) ends with no graph output, which a plain
// capture may not. Error results are printed by name, as CUDA gives them.
#include <cstdio>
#include <vector>

#include "corpus.h"

__global__ void fill(int* p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

__global__ void set_condition(cudaGraphConditionalHandle h, unsigned v) { cudaGraphSetConditional(h, v); }

static long long sum(const std::vector<int>& v) {
  long long s = 0;
  for (int x : v) s += x;
  return s;
}

int main() {
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(int);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  // Graphs each allocating memory they leave allocated, filled by a kernel.
  const int kGraphs = 3;
  int* kept[kGraphs];
  cudaGraph_t graphs[kGraphs];
  cudaGraphExec_t execs[kGraphs];
  for (int g = 0; g < kGraphs; ++g) {
    CK(cudaGraphCreate(&graphs[g], 0));
    cudaMemAllocNodeParams ap{};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
    ap.bytesize = bytes;
    cudaGraphNode_t alloc_node, kernel_node;
    CK(cudaGraphAddMemAllocNode(&alloc_node, graphs[g], nullptr, 0, &ap));
    kept[g] = static_cast<int*>(ap.dptr);
    int value = 1000 * (g + 1);
    int count = n;
    void* args[] = {&kept[g], &count, &value};
    cudaKernelNodeParams kp{};
    kp.func = reinterpret_cast<void*>(fill);
    kp.gridDim = dim3((n + 255) / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CK(cudaGraphAddKernelNode(&kernel_node, graphs[g], &alloc_node, 1, &kp));
    CK(cudaGraphInstantiate(&execs[g], graphs[g], 0));
    CK(cudaGraphLaunch(execs[g], s));
  }
  CK(cudaStreamSynchronize(s));
  std::vector<int> h(n);
  for (int g = 0; g < kGraphs; ++g) {
    cudaPointerAttributes attr{};
    CK(cudaPointerGetAttributes(&attr, kept[g]));
    printf("graph %d memory: %s on device %d\n", g, type_name(attr.type), attr.device);
    CK(cudaMemcpy(h.data(), kept[g], bytes, cudaMemcpyDeviceToHost));
    printf("graph %d filled: first %d last %d sum %lld\n", g, h[0], h[n - 1], sum(h));
    EXPECT(h[0] == 1000 * (g + 1) && h[n - 1] == 1000 * (g + 1) + n - 1, "fill %d", g);
  }
  // The application's own copies, memsets and kernels on it.
  std::vector<int> ones(n, 1);
  CK(cudaMemcpy(kept[0], ones.data(), bytes, cudaMemcpyHostToDevice));
  add_one<<<(n + 255) / 256, 256, 0, s>>>(kept[0], n);
  CK(cudaMemsetAsync(kept[1], 0, bytes / 2, s));
  CK(cudaMemcpyAsync(kept[2], kept[0], bytes, cudaMemcpyDeviceToDevice, s));
  CK(cudaStreamSynchronize(s));
  for (int g = 0; g < kGraphs; ++g) {
    CK(cudaMemcpy(h.data(), kept[g], bytes, cudaMemcpyDefault));
    printf("after the application's work, graph %d memory sums %lld\n", g, sum(h));
  }
  // Freed by the application: once, the graph destroyed or not.
  CK(cudaGraphExecDestroy(execs[0]));
  CK(cudaGraphDestroy(graphs[0]));
  for (int g = 0; g < kGraphs; ++g) {
    CK(cudaFree(kept[g]));
    cudaError_t again = cudaFree(kept[g]);
    printf("graph %d memory freed; freeing it again: %s\n", g, cudaGetErrorName(again));
    cudaGetLastError();
  }
  for (int g = 1; g < kGraphs; ++g) {
    CK(cudaGraphExecDestroy(execs[g]));
    CK(cudaGraphDestroy(graphs[g]));
  }

  // A conditional node's body filled by capture, the capture ended with no output.
  int* data;
  CK(cudaMalloc(&data, bytes));
  CK(cudaMemset(data, 0, bytes));
  cudaGraph_t cg;
  CK(cudaGraphCreate(&cg, 0));
  cudaGraphConditionalHandle handle;
  CK(cudaGraphConditionalHandleCreate(&handle, cg, 0, 0));
  cudaGraphNode_t setter, cond;
  unsigned one = 1;
  void* set_args[] = {&handle, &one};
  cudaKernelNodeParams sp{};
  sp.func = reinterpret_cast<void*>(set_condition);
  sp.gridDim = dim3(1);
  sp.blockDim = dim3(1);
  sp.kernelParams = set_args;
  CK(cudaGraphAddKernelNode(&setter, cg, nullptr, 0, &sp));
  cudaGraphNodeParams cp{};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = handle;
  cp.conditional.type = cudaGraphCondTypeIf;
  cp.conditional.size = 1;
  CK(cudaGraphAddNode(&cond, cg, &setter, nullptr, 1, &cp));
  cudaGraph_t body = cp.conditional.phGraph_out[0];
  cudaStream_t capture;
  CK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  CK(cudaStreamBeginCaptureToGraph(capture, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
  add_one<<<(n + 255) / 256, 256, 0, capture>>>(data, n);
  add_one<<<(n + 255) / 256, 256, 0, capture>>>(data, n);
  CK(cudaStreamEndCapture(capture, nullptr));
  size_t body_nodes = 0;
  CK(cudaGraphGetNodes(body, nullptr, &body_nodes));
  printf("conditional body captured: %zu nodes\n", body_nodes);
  cudaGraphExec_t cx;
  CK(cudaGraphInstantiate(&cx, cg, 0));
  CK(cudaGraphLaunch(cx, s));
  CK(cudaGraphLaunch(cx, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(h.data(), data, bytes, cudaMemcpyDeviceToHost));
  printf("after two launches the body ran: sum %lld\n", sum(h));
  EXPECT(sum(h) == 4LL * n, "sum %lld", sum(h));

  // A plain capture's graph has nowhere else to go.
  CK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeRelaxed));
  add_one<<<(n + 255) / 256, 256, 0, capture>>>(data, n);
  cudaError_t no_output = cudaStreamEndCapture(capture, nullptr);
  printf("plain capture ended with no output: %s\n", cudaGetErrorName(no_output));
  cudaStreamCaptureStatus status;
  CK(cudaStreamIsCapturing(capture, &status));
  printf("still capturing: %s\n", status == cudaStreamCaptureStatusActive ? "yes" : "no");
  if (status != cudaStreamCaptureStatusNone) {
    cudaGraph_t plain = nullptr;
    cudaError_t end = cudaStreamEndCapture(capture, &plain);
    printf("ended with an output: %s\n", cudaGetErrorName(end));
    if (plain) CK(cudaGraphDestroy(plain));
  }
  cudaGetLastError();

  CK(cudaGraphExecDestroy(cx));
  CK(cudaGraphDestroy(cg));
  CK(cudaStreamDestroy(capture));
  CK(cudaFree(data));
  CK(cudaStreamDestroy(s));
  return finish();
}
