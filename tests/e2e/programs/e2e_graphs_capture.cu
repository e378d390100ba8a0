// Stream capture: work queued on a capturing stream becomes a graph instead
// of running; the instantiated graph replays it (copies and memsets for
// real, kernels validated); forks and joins through events; host functions
// become host nodes run in this process; what a graph cannot hold (over
// tcp copies with this process's host memory, waiting on the stream)
// invalidates the capture.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void scale(float* p, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}

static int g_host_runs = 0;
static void count_run(void* arg) { g_host_runs += *static_cast<int*>(arg); }

int main() {
  const size_t n = 1 << 20;
  unsigned char *a, *b, *c;
  OK(cudaMalloc(&a, n));
  OK(cudaMalloc(&b, n));
  OK(cudaMalloc(&c, n));
  OK(cudaMemset(a, 0, n));
  OK(cudaMemset(b, 0, n));
  OK(cudaMemset(c, 0, n));
  cudaStream_t s, s2;
  OK(cudaStreamCreate(&s));
  OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  // Capture: memset, kernel, device-to-device copy, host function.
  cudaStreamCaptureStatus status;
  OK(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusNone);
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusActive);
  EXPECT_STATUS(cudaErrorIllegalState, cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaGetLastError();
  OK(cudaMemsetAsync(a, 7, n, s));
  scale<<<(n / 4 + 255) / 256, 256, 0, s>>>(reinterpret_cast<float*>(c), 2.0f, n / 4);
  OK(cudaGetLastError());
  OK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s));
  int weight = 1;
  OK(cudaLaunchHostFunc(s, count_run, &weight));

  unsigned long long id = 0;
  cudaGraph_t capturing = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t ndeps = 0;
  OK(cudaStreamGetCaptureInfo(s, &status, &id, &capturing, &deps, nullptr, &ndeps));
  CHECK(status == cudaStreamCaptureStatusActive);
  CHECK(id != 0);
  CHECK(capturing != nullptr);
  CHECK(ndeps == 1);
  if (ndeps == 1) {
    cudaGraphNodeType type;
    OK(cudaGraphNodeGetType(deps[0], &type));
    CHECK(type == cudaGraphNodeTypeHost);
  }

  cudaGraph_t graph = nullptr;
  OK(cudaStreamEndCapture(s, &graph));
  CHECK(graph != nullptr);
  OK(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusNone);
  // Captured, not run.
  CHECK(all(read_back(a, n), 0));
  CHECK(g_host_runs == 0);

  size_t count = 0;
  OK(cudaGraphGetNodes(graph, nullptr, &count));
  CHECK(count == 4);
  std::vector<cudaGraphNode_t> nodes(count);
  OK(cudaGraphGetNodes(graph, nodes.data(), &count));
  std::vector<cudaGraphNodeType> types;
  for (auto node : nodes) {
    cudaGraphNodeType t;
    OK(cudaGraphNodeGetType(node, &t));
    types.push_back(t);
  }
  CHECK(types.size() == 4 && types[0] == cudaGraphNodeTypeMemset && types[1] == cudaGraphNodeTypeKernel &&
        types[2] == cudaGraphNodeTypeMemcpy && types[3] == cudaGraphNodeTypeHost);
  size_t roots = 0, edges = 0;
  OK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  OK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  CHECK(roots == 1);
  CHECK(edges == 3);

  cudaGraphExec_t exec;
  OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) OK(cudaGraphLaunch(exec, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(a, n), 7));
  CHECK(all(read_back(b, n), 7));
  CHECK(g_host_runs == 3);

  // Fork and join: s2 joins through an event, its work is part of the graph.
  cudaEvent_t fork, join;
  OK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  OK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  OK(cudaMemsetAsync(a, 1, n, s));
  OK(cudaEventRecord(fork, s));
  OK(cudaStreamWaitEvent(s2, fork, 0));
  OK(cudaStreamIsCapturing(s2, &status));
  CHECK(status == cudaStreamCaptureStatusActive);
  OK(cudaMemsetAsync(c, 3, n, s2));
  OK(cudaEventRecord(join, s2));
  OK(cudaMemcpyAsync(b, a, n / 2, cudaMemcpyDeviceToDevice, s));
  OK(cudaStreamWaitEvent(s, join, 0));
  cudaGraph_t forked;
  OK(cudaStreamEndCapture(s, &forked));
  OK(cudaStreamIsCapturing(s2, &status));
  CHECK(status == cudaStreamCaptureStatusNone);
  OK(cudaGraphGetNodes(forked, nullptr, &count));
  CHECK(count == 3);
  OK(cudaGraphGetRootNodes(forked, nullptr, &roots));
  CHECK(roots == 1);
  cudaGraphExec_t forked_exec;
  OK(cudaGraphInstantiateWithFlags(&forked_exec, forked, 0));
  OK(cudaGraphLaunch(forked_exec, s));
  OK(cudaStreamSynchronize(s));
  std::vector<unsigned char> bb = read_back(b, n);
  CHECK(all(read_back(c, n), 3));
  CHECK(bb[0] == 1 && bb[n / 2 - 1] == 1 && bb[n / 2] == 7);

  // A graph launched into a capture becomes a child graph node.
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaGraphLaunch(forked_exec, s));
  cudaGraph_t outer;
  OK(cudaStreamEndCapture(s, &outer));
  OK(cudaGraphGetNodes(outer, nullptr, &count));
  CHECK(count == 1);
  cudaGraphNode_t child_node;
  count = 1;
  OK(cudaGraphGetNodes(outer, &child_node, &count));
  cudaGraphNodeType t;
  OK(cudaGraphNodeGetType(child_node, &t));
  CHECK(t == cudaGraphNodeTypeGraph);
  cudaGraph_t embedded;
  OK(cudaGraphChildGraphNodeGetGraph(child_node, &embedded));
  OK(cudaGraphGetNodes(embedded, nullptr, &count));
  CHECK(count == 3);
  // A child graph belongs to its node.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphDestroy(embedded));

  // Stream-ordered allocation in a capture: allocation and free nodes.
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  unsigned char* scratch = nullptr;
  OK(cudaMallocAsync(&scratch, n, s));
  OK(cudaMemsetAsync(scratch, 0x5a, n, s));
  OK(cudaMemcpyAsync(b, scratch, n, cudaMemcpyDeviceToDevice, s));
  OK(cudaFreeAsync(scratch, s));
  cudaGraph_t pooled;
  OK(cudaStreamEndCapture(s, &pooled));
  count = 4;
  std::vector<cudaGraphNode_t> pooled_nodes(count);
  OK(cudaGraphGetNodes(pooled, pooled_nodes.data(), &count));
  CHECK(count == 4);
  cudaGraphNodeType first_type, last_type;
  OK(cudaGraphNodeGetType(pooled_nodes[0], &first_type));
  OK(cudaGraphNodeGetType(pooled_nodes[3], &last_type));
  CHECK(first_type == cudaGraphNodeTypeMemAlloc && last_type == cudaGraphNodeTypeMemFree);
  cudaGraphExec_t pooled_exec;
  OK(cudaGraphInstantiate(&pooled_exec, pooled, 0));
  OK(cudaGraphLaunch(pooled_exec, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(b, n), 0x5a));
  OK(cudaGraphExecDestroy(pooled_exec));
  OK(cudaGraphDestroy(pooled));

  // A copy with this process's pageable memory: the capture takes it
  // (e2e_graphs_pageable.cu).
  std::vector<unsigned char> host(n, 5);
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  OK(cudaMemcpyAsync(a, host.data(), n, cudaMemcpyHostToDevice, s));
  cudaGraph_t taken = nullptr;
  OK(cudaStreamEndCapture(s, &taken));
  CHECK(taken != nullptr);
  OK(cudaGraphDestroy(taken));
  OK(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusNone);

  // Waiting for a capturing stream ends the capture's validity.
  cudaGraph_t refused = nullptr;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  EXPECT_STATUS(cudaErrorStreamCaptureUnsupported, cudaStreamSynchronize(s));
  EXPECT_STATUS(cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &refused));
  cudaGetLastError();

  // The legacy default stream cannot capture; ending a capture never begun fails.
  EXPECT_STATUS(cudaErrorStreamCaptureUnsupported, cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
  EXPECT_STATUS(cudaErrorIllegalState, cudaStreamEndCapture(s2, &refused));

  // Capture into an existing graph, after one of its nodes.
  cudaGraph_t into;
  OK(cudaGraphCreate(&into, 0));
  cudaGraphNode_t first;
  OK(cudaGraphAddEmptyNode(&first, into, nullptr, 0));
  OK(cudaStreamBeginCaptureToGraph(s, into, &first, nullptr, 1, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(c, 9, n, s));
  // Not destroyed while the capture adds to it.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphDestroy(into));
  cudaGetLastError();
  cudaGraph_t same;
  OK(cudaStreamEndCapture(s, &same));
  CHECK(same == into);
  OK(cudaGraphGetEdges(into, nullptr, nullptr, nullptr, &edges));
  CHECK(edges == 1);
  // Ending a capture into an existing graph needs no output: the graph is the application's.
  OK(cudaStreamBeginCaptureToGraph(s, into, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(c, 8, n, s));
  OK(cudaStreamEndCapture(s, nullptr));
  cudaStreamCaptureStatus after_null;
  OK(cudaStreamIsCapturing(s, &after_null));
  CHECK(after_null == cudaStreamCaptureStatusNone);
  size_t into_nodes = 0;
  OK(cudaGraphGetNodes(into, nullptr, &into_nodes));
  CHECK(into_nodes == 3);
  // A plain capture ended with no output ends (as on the H100): its graph is dropped.
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(c, 7, n, s));
  OK(cudaStreamEndCapture(s, nullptr));
  cudaStreamCaptureStatus still;
  OK(cudaStreamIsCapturing(s, &still));
  CHECK(still == cudaStreamCaptureStatusNone);

  // Captured work is only recorded: as locally, a captured memset or device
  // copy may name addresses the application never allocated (cuDNN captures
  // its plans with placeholders to learn their launches); outside a capture
  // the same calls are refused.
  void* placeholder = reinterpret_cast<void*>(0x80);
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(placeholder, 0, 4096, s));
  OK(cudaMemset2DAsync(placeholder, 512, 0, 256, 4, s));
  OK(cudaMemcpyAsync(a, placeholder, 4096, cudaMemcpyDeviceToDevice, s));
  OK(cudaMemcpy2DAsync(placeholder, 512, a, 512, 256, 4, cudaMemcpyDeviceToDevice, s));
  cudaGraph_t placeholders;
  OK(cudaStreamEndCapture(s, &placeholders));
  size_t placeholder_nodes = 0;
  OK(cudaGraphGetNodes(placeholders, nullptr, &placeholder_nodes));
  CHECK(placeholder_nodes == 4);
  OK(cudaGraphDestroy(placeholders));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemsetAsync(placeholder, 0, 4096, s));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyAsync(a, placeholder, 4096, cudaMemcpyDeviceToDevice, s));
  OK(cudaStreamSynchronize(s));

  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  OK(cudaThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == cudaStreamCaptureModeGlobal);
  OK(cudaThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == cudaStreamCaptureModeRelaxed);

  OK(cudaGraphExecDestroy(exec));
  OK(cudaGraphExecDestroy(forked_exec));
  OK(cudaGraphDestroy(graph));
  OK(cudaGraphDestroy(forked));
  OK(cudaGraphDestroy(outer));
  OK(cudaGraphDestroy(into));
  OK(cudaDeviceSynchronize());
  return finish();
}
