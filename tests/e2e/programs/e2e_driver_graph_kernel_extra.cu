// Driver-API graph kernel nodes whose arguments come as one `extra` buffer,
// as XLA's command buffers make them: add, get, set, executable set, update
// and the generic cuGraphAddNode / cuGraphNodeSetParams / cuGraphExecNodeSetParams
// (with a CUkernel in `kern`). The arguments are read back from the server's
// node (get-params hands out kernelParams pointers into them, as CUDA does).
// (The test backend validates launches but does not run them.)
#include <cstddef>
#include <cstring>

#include "driver_check.h"

struct Scale {
  double factor;
  char tag;
};
// scale(Scale s, float* data, int n), laid out as its parameters.
struct ScaleArgs {
  Scale s;
  CUdeviceptr data;
  int n;
};

// The parameters end at n (the struct's tail padding is not theirs).
static size_t g_size = offsetof(ScaleArgs, n) + sizeof(int);

struct Extra {
  ScaleArgs args;
  void* list[5];
  explicit Extra(ScaleArgs a) : args(a) {
    list[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    list[1] = &args;
    list[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    list[3] = &g_size;
    list[4] = CU_LAUNCH_PARAM_END;
  }
};

static CUDA_KERNEL_NODE_PARAMS node_params(CUfunction f, void** extra, unsigned grid) {
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = f;
  kp.gridDimX = grid;
  kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 128;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.extra = extra;
  return kp;
}

// The node's arguments as the server holds them.
static bool holds(CUgraphNode node, const ScaleArgs& want, unsigned grid) {
  // As NVIDIA's driver (seen on the H200): a node made with `extra` hands
  // back an `extra` list, kernelParams null.
  CUDA_KERNEL_NODE_PARAMS back{};
  if (cuGraphKernelNodeGetParams(node, &back) != CUDA_SUCCESS || back.kernelParams || !back.extra) return false;
  if (back.extra[0] != CU_LAUNCH_PARAM_BUFFER_POINTER || back.extra[2] != CU_LAUNCH_PARAM_BUFFER_SIZE ||
      back.extra[4] != CU_LAUNCH_PARAM_END || *static_cast<size_t*>(back.extra[3]) < g_size)
    return false;
  ScaleArgs got;
  std::memcpy(&got, back.extra[1], g_size);
  return back.gridDimX == grid && got.s.factor == want.s.factor && got.s.tag == want.s.tag && got.data == want.data &&
         got.n == want.n;
}

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUdevice dev;
  CU_OK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_OK(cuCtxSetCurrent(ctx));
  CUmodule module;
  CU_OK(cuModuleLoad(&module, RGPU_PTX_FILE));
  CUfunction scale;
  CU_OK(cuModuleGetFunction(&scale, module, "scale"));
  CUdeviceptr data;
  CU_OK(cuMemAlloc(&data, 4096 * sizeof(float)));
  CUstream s;
  CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

  // Add and get.
  Extra first({{2.5, 'x'}, data, 4096});
  CUgraph g;
  CU_OK(cuGraphCreate(&g, 0));
  CUgraphNode node;
  CUDA_KERNEL_NODE_PARAMS kp = node_params(scale, first.list, 32);
  CU_OK(cuGraphAddKernelNode(&node, g, nullptr, 0, &kp));
  CHECK(holds(node, first.args, 32));

  // Set: new arguments reach the node.
  Extra second({{-1.0, 'y'}, data + 64, 1024});
  kp = node_params(scale, second.list, 8);
  CU_OK(cuGraphKernelNodeSetParams(node, &kp));
  CHECK(holds(node, second.args, 8));

  CUgraphExec gx;
  CU_OK(cuGraphInstantiateWithFlags(&gx, g, 0));
  CU_OK(cuGraphLaunch(gx, s));
  // Executable set, then a launch with them.
  kp = node_params(scale, first.list, 32);
  CU_OK(cuGraphExecKernelNodeSetParams(gx, node, &kp));
  CU_OK(cuGraphLaunch(gx, s));
  CU_OK(cuStreamSynchronize(s));

  // Update from a graph of the same shape whose node has other arguments.
  CUgraph g2;
  CU_OK(cuGraphCreate(&g2, 0));
  CUgraphNode node2;
  kp = node_params(scale, second.list, 8);
  CU_OK(cuGraphAddKernelNode(&node2, g2, nullptr, 0, &kp));
  CUgraphExecUpdateResultInfo info{};
  CU_OK(cuGraphExecUpdate_v2(gx, g2, &info));
  CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
  CU_OK(cuGraphLaunch(gx, s));
  CU_OK(cuStreamSynchronize(s));

  // The generic form, naming the kernel by CUkernel (func null) with its context.
  CUlibrary library;
  CU_OK(cuLibraryLoadFromFile(&library, RGPU_PTX_FILE, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel kern;
  CU_OK(cuLibraryGetKernel(&kern, library, "scale"));
  CUgraphNodeParams gp{};
  gp.type = CU_GRAPH_NODE_TYPE_KERNEL;
  gp.kernel.kern = kern;
  gp.kernel.ctx = ctx;
  gp.kernel.gridDimX = 4;
  gp.kernel.gridDimY = gp.kernel.gridDimZ = 1;
  gp.kernel.blockDimX = 128;
  gp.kernel.blockDimY = gp.kernel.blockDimZ = 1;
  gp.kernel.extra = first.list;
  CUgraphNode generic, after;
  CU_OK(cuGraphAddNode(&generic, g2, &node2, nullptr, 1, &gp));
  CHECK(holds(generic, first.args, 4));
  CUgraphEdgeData edge{};
  CU_OK(cuGraphAddNode_v2(&after, g2, &generic, &edge, 1, &gp));
  gp.kernel.extra = second.list;
  CU_OK(cuGraphNodeSetParams(after, &gp));
  CHECK(holds(after, second.args, 4));
  CUgraphExec gx2;
  CU_OK(cuGraphInstantiateWithFlags(&gx2, g2, 0));
  CU_OK(cuGraphExecNodeSetParams(gx2, generic, &gp));
  CU_OK(cuGraphLaunch(gx2, s));
  CU_OK(cuStreamSynchronize(s));

  // An argument in page-locked host memory is reached as a launch's is.
  void* pinned;
  CU_OK(cuMemHostAlloc(&pinned, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
  Extra host({{1.0, 'h'}, reinterpret_cast<CUdeviceptr>(pinned), 16});
  kp = node_params(scale, host.list, 1);
  CUgraphNode on_host;
  CU_OK(cuGraphAddKernelNode(&on_host, g, &node, 1, &kp));

  // Malformed lists and buffers are refused; the node keeps what it had.
  void* unknown[] = {reinterpret_cast<void*>(0x7), nullptr, CU_LAUNCH_PARAM_END};
  kp = node_params(scale, unknown, 8);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphKernelNodeSetParams(node, &kp));
  size_t too_big = sizeof(ScaleArgs) + 64;
  char big[sizeof(ScaleArgs) + 64] = {};
  void* oversized[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, big, CU_LAUNCH_PARAM_BUFFER_SIZE, &too_big,
                       CU_LAUNCH_PARAM_END};
  kp = node_params(scale, oversized, 8);
  EXPECT_CU(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, cuGraphKernelNodeSetParams(node, &kp));
  void* no_buffer[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &g_size, CU_LAUNCH_PARAM_END};
  kp = node_params(scale, no_buffer, 8);
  CUgraphNode bad;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddKernelNode(&bad, g, nullptr, 0, &kp));
  CHECK(holds(node, second.args, 8));

  CU_OK(cuGraphExecDestroy(gx2));
  CU_OK(cuGraphExecDestroy(gx));
  CU_OK(cuGraphDestroy(g2));
  CU_OK(cuGraphDestroy(g));
  CU_OK(cuMemFreeHost(pinned));
  CU_OK(cuLibraryUnload(library));
  CU_OK(cuMemFree(data));
  return finish();
}
