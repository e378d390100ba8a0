// Driver-API graphs on a real GPU: a capture of kernels (one taking a
// struct parameter), a byte memset and a device-to-device copy; graphs built
// with cuGraphAddKernelNode/MemcpyNode/MemsetNode and dependencies; kernel
// parameters read back and changed in the executable graph; an update from a
// clone. Every result is checked on the host.
#include <vector>

#include "driver_corpus.h"
#include "driver_kernels_ptx.h"

static const int kN = (1 << 18) + 33;

static std::vector<int> read(CUdeviceptr d) {
  std::vector<int> h(kN);
  CU(cuMemcpyDtoH(h.data(), d, kN * sizeof(int)));
  return h;
}

// out[i] must be (i % 1000 - 300) * scale + shift.
static void check(CUdeviceptr d, double scale, int shift, const char* what) {
  std::vector<int> h = read(d);
  int bad = 0;
  for (int i = 0; i < kN; ++i)
    if (h[i] != static_cast<int>((i % 1000 - 300) * scale) + shift) ++bad;
  EXPECT(bad == 0, "%s: %d wrong elements", what, bad);
  printf("%s: out[777]=%d checksum=%016llx\n", what, h[777],
         static_cast<unsigned long long>(fnv1a(h.data(), h.size() * sizeof(int))));
}

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CUmodule module;
  CU(cuModuleLoadData(&module, kDriverKernelsPtx));
  CUfunction affine;
  CU(cuModuleGetFunction(&affine, module, "affine"));

  std::vector<int> in(kN);
  for (int i = 0; i < kN; ++i) in[i] = i % 1000 - 300;
  const size_t bytes = kN * sizeof(int);
  CUdeviceptr src, staged, out;
  CU(cuMemAlloc(&src, bytes));
  CU(cuMemAlloc(&staged, bytes));
  CU(cuMemAlloc(&out, bytes));
  CU(cuMemcpyHtoD(src, in.data(), bytes));
  CUstream s;
  CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  unsigned grid = (kN + 255) / 256;
  int n = kN;

  // Capture: clear out, copy src to staged, out = affine(staged).
  Affine p{2.0, 11};
  void* args[] = {&p, &staged, &out, &n};
  CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU(cuMemsetD8Async(out, 0, bytes, s));
  CU(cuMemcpyDtoDAsync(staged, src, bytes, s));
  CU(cuLaunchKernel(affine, grid, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  CUgraph captured;
  CU(cuStreamEndCapture(s, &captured));
  size_t nodes = 0;
  CU(cuGraphGetNodes(captured, nullptr, &nodes));
  printf("captured: %zu nodes\n", nodes);
  CUgraphExec cx;
  CU(cuGraphInstantiate(&cx, captured, 0));
  for (int i = 0; i < 3; ++i) CU(cuGraphLaunch(cx, s));
  CU(cuStreamSynchronize(s));
  check(out, 2.0, 11, "captured graph");

  // The same by hand: memset -> kernel <- copy.
  CUgraph g;
  CU(cuGraphCreate(&g, 0));
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = out;
  ms.value = 0;
  ms.elementSize = 4;
  ms.width = kN;
  ms.height = 1;
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = src;
  cp.dstDevice = staged;
  cp.WidthInBytes = bytes;
  cp.Height = cp.Depth = 1;
  CUgraphNode set, copy, kernel;
  CU(cuGraphAddMemsetNode(&set, g, nullptr, 0, &ms, ctx));
  CU(cuGraphAddMemcpyNode(&copy, g, nullptr, 0, &cp, ctx));
  p = Affine{-1.5, 4};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = affine;
  kp.gridDimX = grid;
  kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 256;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraphNode deps[] = {set, copy};
  CU(cuGraphAddKernelNode(&kernel, g, deps, 2, &kp));
  size_t edges = 0;
  CU(cuGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  printf("built: %zu edges\n", edges);
  CUDA_KERNEL_NODE_PARAMS back{};
  CU(cuGraphKernelNodeGetParams(kernel, &back));
  const Affine* got = static_cast<const Affine*>(back.kernelParams[0]);
  EXPECT(back.func == affine && got->scale == -1.5 && got->shift == 4, "kernel node parameters read back");

  CUgraphExec gx;
  CU(cuGraphInstantiate(&gx, g, 0));
  CU(cuGraphLaunch(gx, s));
  CU(cuStreamSynchronize(s));
  check(out, -1.5, 4, "built graph");

  // New struct argument in the executable graph.
  p = Affine{0.5, -9};
  CU(cuGraphExecKernelNodeSetParams(gx, kernel, &kp));
  CU(cuGraphLaunch(gx, s));
  CU(cuStreamSynchronize(s));
  check(out, 0.5, -9, "executable graph parameters");

  // Update from a clone whose kernel node has other arguments.
  CUgraph clone;
  CU(cuGraphClone(&clone, g));
  CUgraphNode kernel_clone;
  CU(cuGraphNodeFindInClone(&kernel_clone, kernel, clone));
  p = Affine{3.0, 1};
  CU(cuGraphKernelNodeSetParams(kernel_clone, &kp));
  CUgraphExecUpdateResultInfo info{};
  CU(cuGraphExecUpdate(gx, clone, &info));
  EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS, "update result %d", static_cast<int>(info.result));
  CU(cuGraphLaunch(gx, s));
  CU(cuStreamSynchronize(s));
  check(out, 3.0, 1, "updated from the clone");

  CU(cuGraphExecDestroy(gx));
  CU(cuGraphExecDestroy(cx));
  CU(cuGraphDestroy(clone));
  CU(cuGraphDestroy(g));
  CU(cuGraphDestroy(captured));
  CU(cuMemFree(src));
  CU(cuMemFree(staged));
  CU(cuMemFree(out));
  CU(cuModuleUnload(module));
  CU(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
