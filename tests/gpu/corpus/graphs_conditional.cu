// Conditional graph nodes run by conditions kernels set with
// cudaGraphSetConditional: an IF/ELSE chosen by a sum, a WHILE counting to a
// limit read from device memory (its body captured into the body graph), and
// a SWITCH picking one of three bodies by a value (none when out of range).
// Each graph is launched several times with different data.
#include <cstdio>

#include "corpus.h"

__global__ void choose_if(const int* data, int n, int threshold, cudaGraphConditionalHandle h) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += data[i];
  cudaGraphSetConditional(h, sum > threshold ? 1u : 0u);
}

__global__ void scale(int* data, int n, int factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

// One step of the loop: counts, and ends the loop at the limit.
__global__ void loop_step(int* counter, const int* limit, cudaGraphConditionalHandle h) {
  int c = ++*counter;
  if (c >= *limit) cudaGraphSetConditional(h, 0);
}

__global__ void choose_case(const int* selector, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, static_cast<unsigned>(*selector));
}

__global__ void add_value(int* target, int v) { *target += v; }

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t* dep, void* func, dim3 grid, dim3 block,
                                  void** args) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeKernel;
  p.kernel.func = func;
  p.kernel.gridDim = grid;
  p.kernel.blockDim = block;
  p.kernel.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddNode(&node, g, dep, nullptr, dep ? 1 : 0, &p));
  return node;
}

static cudaGraphNode_t add_conditional(cudaGraph_t g, const cudaGraphNode_t* dep, cudaGraphConditionalHandle h,
                                       cudaGraphConditionalNodeType type, unsigned size, cudaGraph_t* bodies) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h;
  p.conditional.type = type;
  p.conditional.size = size;
  cudaGraphNode_t node;
  CK(cudaGraphAddNode(&node, g, dep, nullptr, dep ? 1 : 0, &p));
  for (unsigned i = 0; i < size; ++i) bodies[i] = p.conditional.phGraph_out[i];
  return node;
}

static void if_else(cudaStream_t s) {
  const int n = 256;
  int* data;
  CK(cudaMalloc(&data, n * sizeof(int)));
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
  int count = n, threshold = 1000, twice = 2, negate = -1;
  void* choose_args[] = {&data, &count, &threshold, &h};
  cudaGraphNode_t choose = add_kernel(g, nullptr, reinterpret_cast<void*>(choose_if), 1, 1, choose_args);
  cudaGraph_t bodies[2];
  add_conditional(g, &choose, h, cudaGraphCondTypeIf, 2, bodies);
  void* then_args[] = {&data, &count, &twice};
  void* else_args[] = {&data, &count, &negate};
  add_kernel(bodies[0], nullptr, reinterpret_cast<void*>(scale), 1, n, then_args);
  add_kernel(bodies[1], nullptr, reinterpret_cast<void*>(scale), 1, n, else_args);
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0));
  int host[n];
  for (int fill : {1, 7}) {  // sums about 510 (else) and 2050 (then)
    for (int i = 0; i < n; ++i) host[i] = fill + (i % 3);
    CK(cudaMemcpy(data, host, sizeof(host), cudaMemcpyHostToDevice));
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(host, data, sizeof(host), cudaMemcpyDeviceToHost));
    long sum = 0;
    for (int v : host) sum += v;
    printf("if_else fill %d: first %d last %d sum %ld\n", fill, host[0], host[n - 1], sum);
    int expect_first = fill > 3 ? 2 * fill : -fill;
    EXPECT(host[0] == expect_first, "fill %d first %d", fill, host[0]);
  }
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));
  CK(cudaFree(data));
}

static void while_loop(cudaStream_t s) {
  int *counter, *limit;
  CK(cudaMalloc(&counter, sizeof(int)));
  CK(cudaMalloc(&limit, sizeof(int)));
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  // Each launch enters the loop (default 1); the body ends it.
  CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
  cudaGraph_t body;
  add_conditional(g, nullptr, h, cudaGraphCondTypeWhile, 1, &body);
  // The body is captured into the body graph.
  cudaStream_t cs;
  CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  CK(cudaStreamBeginCaptureToGraph(cs, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
  loop_step<<<1, 1, 0, cs>>>(counter, limit, h);
  cudaGraph_t captured;
  CK(cudaStreamEndCapture(cs, &captured));
  EXPECT(captured == body, "capture ended on another graph");
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0));
  for (int lim : {5, 37, 1}) {
    int zero = 0;
    CK(cudaMemcpy(counter, &zero, sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(limit, &lim, sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    int got = 0;
    CK(cudaMemcpy(&got, counter, sizeof(int), cudaMemcpyDeviceToHost));
    printf("while limit %d: iterations %d\n", lim, got);
    EXPECT(got == lim, "limit %d iterations %d", lim, got);
  }
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(cs));
  CK(cudaFree(counter));
  CK(cudaFree(limit));
}

static void switch_cases(cudaStream_t s) {
  int *selector, *target;
  CK(cudaMalloc(&selector, sizeof(int)));
  CK(cudaMalloc(&target, sizeof(int)));
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
  void* choose_args[] = {&selector, &h};
  cudaGraphNode_t choose = add_kernel(g, nullptr, reinterpret_cast<void*>(choose_case), 1, 1, choose_args);
  cudaGraph_t bodies[3];
  add_conditional(g, &choose, h, cudaGraphCondTypeSwitch, 3, bodies);
  int values[3] = {10, 200, 3000};
  for (int i = 0; i < 3; ++i) {
    void* args[] = {&target, &values[i]};
    add_kernel(bodies[i], nullptr, reinterpret_cast<void*>(add_value), 1, 1, args);
  }
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0));
  for (int sel : {2, 0, 5, 1}) {
    int start = 1;
    CK(cudaMemcpy(target, &start, sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(selector, &sel, sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    int got = 0;
    CK(cudaMemcpy(&got, target, sizeof(int), cudaMemcpyDeviceToHost));
    printf("switch case %d: value %d\n", sel, got);
    EXPECT(got == 1 + (sel < 3 ? values[sel] : 0), "case %d value %d", sel, got);
  }
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));
  CK(cudaFree(selector));
  CK(cudaFree(target));
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  if_else(s);
  while_loop(s);
  switch_cases(s);
  CK(cudaStreamDestroy(s));
  return finish();
}
