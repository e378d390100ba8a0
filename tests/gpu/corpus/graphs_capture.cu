// Stream capture on a real GPU: a loop of kernels, memsets and
// device-to-device copies captured across two streams (fork and join through
// events) plus a host function, instantiated and launched several times;
// then re-captured with other parameters and applied by
// cudaGraphExecUpdate, and run twice as child graphs of another; last a
// capture with stream-ordered allocation (memory the graph allocates, uses
// and frees). Every result is checked on the host.
#include <vector>

#include "corpus.h"

__global__ void axpb(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

__global__ void add_into(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

static int g_host_runs = 0;
static void count_run(void*) { ++g_host_runs; }

static const int kN = 1 << 20;
static const int kBlocks = (kN + 255) / 256;

// One step: x = x * 1 + b four times; tmp = 2 x on the side stream; y = x + tmp.
static cudaGraph_t capture_step(cudaStream_t s1, cudaStream_t s2, cudaEvent_t fork, cudaEvent_t join, float* x,
                                float* y, float* tmp, float b) {
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  CK(cudaMemsetAsync(y, 0, kN * sizeof(float), s1));
  for (int k = 0; k < 4; ++k) axpb<<<kBlocks, 256, 0, s1>>>(x, 1.0f, b, kN);
  CK(cudaEventRecord(fork, s1));
  CK(cudaStreamWaitEvent(s2, fork, 0));
  CK(cudaMemcpyAsync(tmp, x, kN * sizeof(float), cudaMemcpyDeviceToDevice, s2));
  axpb<<<kBlocks, 256, 0, s2>>>(tmp, 2.0f, 0.0f, kN);
  CK(cudaEventRecord(join, s2));
  add_into<<<kBlocks, 256, 0, s1>>>(y, x, kN);
  CK(cudaStreamWaitEvent(s1, join, 0));
  add_into<<<kBlocks, 256, 0, s1>>>(y, tmp, kN);
  CK(cudaLaunchHostFunc(s1, count_run, nullptr));
  cudaGraph_t g;
  CK(cudaStreamEndCapture(s1, &g));
  return g;
}

// x started at i % 7 and grew by `grown`; y must be 3 x.
static void check(const float* dx, const float* dy, float grown, const char* what) {
  std::vector<float> x(kN), y(kN);
  CK(cudaMemcpy(x.data(), dx, kN * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(y.data(), dy, kN * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < kN; ++i) {
    float want = static_cast<float>(i % 7) + grown;
    if (x[i] != want || y[i] != 3 * want) ++bad;
  }
  EXPECT(bad == 0, "%s: %d wrong elements", what, bad);
  printf("%s: x[5]=%.1f y[5]=%.1f checksum=%016llx\n", what, x[5], y[5],
         static_cast<unsigned long long>(fnv1a(y.data(), y.size() * sizeof(float))));
}

int main() {
  float *x, *y, *tmp;
  CK(cudaMalloc(&x, kN * sizeof(float)));
  CK(cudaMalloc(&y, kN * sizeof(float)));
  CK(cudaMalloc(&tmp, kN * sizeof(float)));
  std::vector<float> init(kN);
  for (int i = 0; i < kN; ++i) init[i] = static_cast<float>(i % 7);
  CK(cudaMemcpy(x, init.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  cudaGraph_t g = capture_step(s1, s2, fork, join, x, y, tmp, 1.0f);
  size_t nodes = 0, roots = 0, edges = 0;
  CK(cudaGraphGetNodes(g, nullptr, &nodes));
  CK(cudaGraphGetRootNodes(g, nullptr, &roots));
  CK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  printf("captured: %zu nodes, %zu root, %zu edges\n", nodes, roots, edges);
  EXPECT(g_host_runs == 0, "the capture ran the host function");

  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0));
  for (int i = 0; i < 5; ++i) CK(cudaGraphLaunch(exec, s1));
  CK(cudaStreamSynchronize(s1));
  EXPECT(g_host_runs == 5, "host function ran %d times", g_host_runs);
  check(x, y, 20.0f, "after 5 launches");

  // The same work with another constant, applied to the executable graph.
  cudaGraph_t g2 = capture_step(s1, s2, fork, join, x, y, tmp, 2.0f);
  cudaGraphExecUpdateResultInfo info{};
  CK(cudaGraphExecUpdate(exec, g2, &info));
  EXPECT(info.result == cudaGraphExecUpdateSuccess, "update result %d", static_cast<int>(info.result));
  CK(cudaGraphLaunch(exec, s1));
  CK(cudaStreamSynchronize(s1));
  check(x, y, 28.0f, "after the update");

  // The second capture twice in a row, as child graphs of another.
  cudaGraph_t outer;
  CK(cudaGraphCreate(&outer, 0));
  cudaGraphNode_t first, second;
  CK(cudaGraphAddChildGraphNode(&first, outer, nullptr, 0, g2));
  CK(cudaGraphAddChildGraphNode(&second, outer, &first, 1, g2));
  CK(cudaGraphGetNodes(outer, nullptr, &nodes));
  printf("outer graph: %zu nodes\n", nodes);
  cudaGraphExec_t outer_exec;
  CK(cudaGraphInstantiate(&outer_exec, outer, 0));
  CK(cudaGraphLaunch(outer_exec, s2));
  CK(cudaStreamSynchronize(s2));
  check(x, y, 44.0f, "after the outer graph");
  EXPECT(g_host_runs == 8, "host function ran %d times", g_host_runs);

  // y = 3 x through memory the graph allocates and frees.
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  float* scratch = nullptr;
  CK(cudaMallocAsync(&scratch, kN * sizeof(float), s1));
  CK(cudaMemcpyAsync(scratch, x, kN * sizeof(float), cudaMemcpyDeviceToDevice, s1));
  axpb<<<kBlocks, 256, 0, s1>>>(scratch, 3.0f, 0.0f, kN);
  CK(cudaMemcpyAsync(y, scratch, kN * sizeof(float), cudaMemcpyDeviceToDevice, s1));
  CK(cudaFreeAsync(scratch, s1));
  cudaGraph_t pooled;
  CK(cudaStreamEndCapture(s1, &pooled));
  CK(cudaGraphGetNodes(pooled, nullptr, &nodes));
  printf("pooled graph: %zu nodes\n", nodes);
  CK(cudaMemset(y, 0, kN * sizeof(float)));
  cudaGraphExec_t pooled_exec;
  CK(cudaGraphInstantiate(&pooled_exec, pooled, 0));
  CK(cudaGraphLaunch(pooled_exec, s1));
  CK(cudaStreamSynchronize(s1));
  check(x, y, 44.0f, "graph-allocated memory");
  CK(cudaGraphExecDestroy(pooled_exec));
  CK(cudaGraphDestroy(pooled));

  CK(cudaGraphExecDestroy(outer_exec));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(outer));
  CK(cudaGraphDestroy(g2));
  CK(cudaGraphDestroy(g));
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(tmp));
  return finish();
}
