// Graph memory the application frees outside its graph, relaunched (the
// pattern of NVIDIA's graphMemoryNodes sample): every launch of a graph whose
// allocation node has no free node allocates the memory again at its address,
// and cudaFree, cudaFreeAsync and cuMemFreeAsync free it after any launch.
// A graph that frees its memory itself keeps it to itself however often it
// runs.
#include <cuda.h>

#include "check.h"

constexpr size_t n = 64 * 1024;

static cudaMemAllocNodeParams alloc_params() {
  cudaMemAllocNodeParams ap{};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
  ap.bytesize = n;
  return ap;
}

// Frees outside the graph, the i-th time with the i-th way of freeing.
static void free_outside(void* p, cudaStream_t s, int i) {
  switch (i % 3) {
    case 0: OK(cudaFreeAsync(p, s)); break;
    case 1: OK(cudaFree(p)); break;
    default: CHECK(cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(p), reinterpret_cast<CUstream>(s)) == CUDA_SUCCESS);
  }
  OK(cudaStreamSynchronize(s));
  // Freed: not memory any more until the next launch.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(p));
  std::vector<unsigned char> out(n);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy(out.data(), p, n, cudaMemcpyDeviceToHost));
  cudaGetLastError();
}

int main() {
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  void* b = nullptr;
  OK(cudaMalloc(&b, n));

  // An allocation node and a memset, no free node; freed outside after each launch.
  cudaMemAllocNodeParams ap = alloc_params();
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t alloc, set;
  OK(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
  cudaMemsetParams m = byte_memset(ap.dptr, 0x21, n);
  OK(cudaGraphAddMemsetNode(&set, g, &alloc, 1, &m));
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  for (int i = 0; i < 4; ++i) {
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    CHECK(all(read_back(ap.dptr, n), 0x21));
    OK(cudaMemsetAsync(ap.dptr, 0x22, n, s));  // the application's memory between launches
    OK(cudaMemcpyAsync(b, ap.dptr, n, cudaMemcpyDeviceToDevice, s));
    OK(cudaStreamSynchronize(s));
    CHECK(all(read_back(b, n), 0x22));
    free_outside(ap.dptr, s, i);
  }
  // A graph of one free node, made while the application has freed the
  // memory and the graph that allocates it is gone (graphMemoryNodes' "freed
  // in a different graph"): it frees what the next launch allocated.
  OK(cudaGraphDestroy(g));
  cudaGraph_t free_graph;
  OK(cudaGraphCreate(&free_graph, 0));
  cudaGraphNode_t free_node;
  OK(cudaGraphAddMemFreeNode(&free_node, free_graph, nullptr, 0, ap.dptr));
  cudaGraphExec_t free_exec;
  OK(cudaGraphInstantiate(&free_exec, free_graph, 0));
  for (int i = 0; i < 2; ++i) {
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    CHECK(all(read_back(ap.dptr, n), 0x21));
    OK(cudaGraphLaunch(free_exec, s));
    OK(cudaStreamSynchronize(s));
    EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(ap.dptr));
    cudaGetLastError();
  }
  OK(cudaGraphExecDestroy(free_exec));
  OK(cudaGraphDestroy(free_graph));

  // The graph destroyed, its executable graph still allocates at each launch.
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(ap.dptr, n), 0x21));
  OK(cudaGraphExecDestroy(x));
  OK(cudaFree(ap.dptr));

  // The same made by stream capture, as the sample does.
  void* captured = nullptr;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMallocAsync(&captured, n, s));
  OK(cudaMemsetAsync(captured, 0x31, n, s));
  cudaGraph_t cg;
  OK(cudaStreamEndCapture(s, &cg));
  cudaGraphExec_t cx;
  OK(cudaGraphInstantiate(&cx, cg, 0));
  for (int i = 0; i < 3; ++i) {
    OK(cudaGraphLaunch(cx, s));
    OK(cudaStreamSynchronize(s));
    CHECK(all(read_back(captured, n), 0x31));
    free_outside(captured, s, i);
  }
  OK(cudaGraphExecDestroy(cx));
  OK(cudaGraphDestroy(cg));

  // Allocation and free nodes both, launched again and again: its memory
  // is the graph's alone.
  ap = alloc_params();
  cudaGraph_t fg;
  OK(cudaGraphCreate(&fg, 0));
  cudaGraphNode_t falloc, fset, fcopy, ffree;
  OK(cudaGraphAddMemAllocNode(&falloc, fg, nullptr, 0, &ap));
  m = byte_memset(ap.dptr, 0x41, n);
  OK(cudaGraphAddMemsetNode(&fset, fg, &falloc, 1, &m));
  OK(cudaGraphAddMemcpyNode1D(&fcopy, fg, &fset, 1, b, ap.dptr, n, cudaMemcpyDeviceToDevice));
  OK(cudaGraphAddMemFreeNode(&ffree, fg, &fcopy, 1, ap.dptr));
  cudaGraphExec_t fx;
  OK(cudaGraphInstantiate(&fx, fg, 0));
  for (int i = 0; i < 5; ++i) {
    OK(cudaMemset(b, 0, n));
    OK(cudaGraphLaunch(fx, s));
    OK(cudaStreamSynchronize(s));
    CHECK(all(read_back(b, n), 0x41));
    EXPECT_STATUS(cudaErrorInvalidValue, cudaFreeAsync(ap.dptr, s));
    cudaGetLastError();
  }
  OK(cudaGraphExecDestroy(fx));
  OK(cudaGraphDestroy(fg));

  // The same captured: cudaMallocAsync and cudaFreeAsync in one capture.
  void* scratch = nullptr;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMallocAsync(&scratch, n, s));
  OK(cudaMemsetAsync(scratch, 0x51, n, s));
  OK(cudaMemcpyAsync(b, scratch, n, cudaMemcpyDeviceToDevice, s));
  OK(cudaFreeAsync(scratch, s));
  OK(cudaStreamEndCapture(s, &cg));
  OK(cudaGraphInstantiate(&cx, cg, 0));
  for (int i = 0; i < 5; ++i) {
    OK(cudaMemset(b, 0, n));
    OK(cudaGraphLaunch(cx, s));
    OK(cudaStreamSynchronize(s));
    CHECK(all(read_back(b, n), 0x51));
  }
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(scratch));
  cudaGetLastError();
  OK(cudaGraphExecDestroy(cx));
  OK(cudaGraphDestroy(cg));

  OK(cudaFree(b));
  OK(cudaStreamDestroy(s));
  return finish();
}
