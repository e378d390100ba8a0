// Graph copy nodes between page-locked host memory (cudaMallocHost) and
// device memory, made node by node and captured: the nodes run at every
// launch with the data the host memory holds then, and read back the
// application's addresses. Over shm the worker maps that memory; over tcp
// and ucx it is staged as pageable memory is (e2e_graphs_pageable.cu).
#include <cstdlib>
#include <cstring>

#include "check.h"

int main() {
  const char* transport = std::getenv("RGPU_TRANSPORT");
  bool shm = transport && std::strcmp(transport, "shm") == 0;
  const size_t n = 1 << 16;
  unsigned char *in, *in2, *out, *dev;
  OK(cudaMallocHost(&in, n));
  OK(cudaMallocHost(&in2, n));
  OK(cudaMallocHost(&out, n));
  OK(cudaMalloc(&dev, n));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));

  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t up = nullptr, down = nullptr;
  OK(cudaGraphAddMemcpyNode1D(&up, g, nullptr, 0, dev, in, n, cudaMemcpyHostToDevice));

  // The same copies captured from a stream.
  cudaGraph_t captured = nullptr;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemcpyAsync(dev, in, n, cudaMemcpyHostToDevice, s));
  OK(cudaMemcpyAsync(out, dev, n, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamEndCapture(s, &captured));
  size_t count = 0;
  OK(cudaGraphGetNodes(captured, nullptr, &count));
  CHECK(count == 2);
  cudaGraphNode_t captured_nodes[2];
  OK(cudaGraphGetNodes(captured, captured_nodes, &count));
  cudaMemcpy3DParms first{};
  OK(cudaGraphMemcpyNodeGetParams(captured_nodes[0], &first));
  CHECK(first.srcPtr.ptr == in && first.dstPtr.ptr == dev && first.kind == cudaMemcpyHostToDevice);
  cudaGraphExec_t cx;
  OK(cudaGraphInstantiate(&cx, captured, 0));
  for (unsigned char v : {0x21, 0x42}) {
    std::memset(in, v, n);
    std::memset(out, 0, n);
    OK(cudaGraphLaunch(cx, s));
    OK(cudaStreamSynchronize(s));
    CHECK(out[0] == v && out[n - 1] == v);
  }
  OK(cudaGraphExecDestroy(cx));
  OK(cudaGraphDestroy(captured));
  // Back to the host, by cudaMemcpyDefault and a 3-D description.
  cudaMemcpy3DParms m{};
  m.srcPtr = make_cudaPitchedPtr(dev, n, n, 1);
  m.dstPtr = make_cudaPitchedPtr(out, n, n, 1);
  m.extent = make_cudaExtent(n, 1, 1);
  m.kind = cudaMemcpyDefault;
  OK(cudaGraphAddMemcpyNode(&down, g, &up, 1, &m));

  // The application's addresses come back, with the direction.
  cudaMemcpy3DParms got{};
  OK(cudaGraphMemcpyNodeGetParams(up, &got));
  CHECK(got.srcPtr.ptr == in && got.dstPtr.ptr == dev && got.kind == cudaMemcpyHostToDevice);
  OK(cudaGraphMemcpyNodeGetParams(down, &got));
  CHECK(got.srcPtr.ptr == dev && got.dstPtr.ptr == out && got.kind == cudaMemcpyDeviceToHost);
  CHECK(got.extent.width == n);

  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  // Each launch copies what the host memory holds at that time.
  for (unsigned char v : {0x5a, 0xc3}) {
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(v + i % 7);
    std::memset(out, 0, n);
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    CHECK(std::memcmp(out, in, n) == 0);
  }
  // The executable graph's node changed to another page-locked buffer.
  std::memset(in2, 0x17, n);
  OK(cudaGraphExecMemcpyNodeSetParams1D(x, up, dev, in2, n, cudaMemcpyHostToDevice));
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out[0] == 0x17 && out[n - 1] == 0x17);
  // A range running past the page-locked allocation is refused.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphMemcpyNodeSetParams1D(up, dev, in + 1, n, cudaMemcpyHostToDevice));
  // The graph's own node changes too, and reads back as set.
  OK(cudaGraphMemcpyNodeSetParams1D(up, dev, in2, n / 2, cudaMemcpyHostToDevice));
  OK(cudaGraphMemcpyNodeGetParams(up, &got));
  CHECK(got.srcPtr.ptr == in2 && got.extent.width == n / 2);

  // Host memory freed under an executable graph, over shm: the worker no
  // longer maps it, and the launch fails instead of touching it. (Staged,
  // the host node would read freed memory, as a local GPU would.)
  OK(cudaFreeHost(in2));
  if (shm) {
    OK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s) == cudaErrorIllegalAddress);
  }

  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));
  OK(cudaStreamDestroy(s));
  OK(cudaFreeHost(in));
  OK(cudaFreeHost(out));
  OK(cudaFree(dev));
  return finish();
}
