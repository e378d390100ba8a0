// Driver-API graphs: capture (legacy and current bindings), explicit kernel,
// memcpy, memset, host, event and child nodes with dependencies, parameters
// read back, executable-graph update and set-params, legacy instantiate and
// edge queries, conditional nodes (an IF/ELSE run by its default value),
// bad handles.
// (The test backend validates launches but does not run them.)
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "driver_check.h"

// The legacy binding, exported but not declared to applications by cuda.h.
extern "C" CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node,
                                                  char* log, size_t log_size);

static int g_host_runs = 0;
static void on_host(void*) { ++g_host_runs; }
static std::atomic<int> g_destroyed{0};
static void on_destroy(void*) { ++g_destroyed; }

static std::vector<unsigned char> read_back(CUdeviceptr d, size_t n) {
  std::vector<unsigned char> h(n);
  CU_OK(cuMemcpyDtoH(h.data(), d, n));
  return h;
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
  CUfunction vadd;
  CU_OK(cuModuleGetFunction(&vadd, module, "vadd"));

  const size_t n = 4096, bytes = n * sizeof(float);
  CUdeviceptr a, b, c;
  CU_OK(cuMemAlloc(&a, bytes));
  CU_OK(cuMemAlloc(&b, bytes));
  CU_OK(cuMemAlloc(&c, bytes));
  CU_OK(cuMemsetD8(a, 0, bytes));
  CU_OK(cuMemsetD8(b, 0, bytes));
  CU_OK(cuMemsetD8(c, 0, bytes));
  CUstream s;
  CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

  // Capture with the current binding: memset, kernel, copy.
  CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureStatus status;
  CU_OK(cuStreamIsCapturing(s, &status));
  CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  // (A value whose bytes differ is captured as a memset node of its element
  // size: e2e_driver_graphs_pageable.cu.)
  CU_OK(cuMemsetD32Async(a, 0x01010101u, n, s));
  int count = static_cast<int>(n);
  void* args[] = {&a, &a, &c, &count};
  CU_OK(cuLaunchKernel(vadd, n / 256, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  CU_OK(cuMemcpyDtoDAsync(b, a, bytes, s));
  cuuint64_t id = 0;
  CUgraph capturing = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t ndeps = 0;
  CU_OK(cuStreamGetCaptureInfo(s, &status, &id, &capturing, &deps, nullptr, &ndeps));
  CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && capturing && ndeps == 1);
  CUgraph graph;
  CU_OK(cuStreamEndCapture(s, &graph));
  size_t num = 0;
  CU_OK(cuGraphGetNodes(graph, nullptr, &num));
  CHECK(num == 3);
  CUgraphExec exec;
  CU_OK(cuGraphInstantiate(&exec, graph, 0));
  CU_OK(cuGraphLaunch(exec, s));
  CU_OK(cuStreamSynchronize(s));
  CHECK(all(read_back(b, bytes), 0x01));

  // Explicit: memset(c) -> kernel -> copy(c -> b) -> host; event record after the copy.
  CUgraph g;
  CU_OK(cuGraphCreate(&g, 0));
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = c;
  ms.value = 0x7;
  ms.elementSize = 1;
  ms.width = bytes;
  ms.height = 1;
  CUgraphNode set_c, kernel, copy, host, record;
  CU_OK(cuGraphAddMemsetNode(&set_c, g, nullptr, 0, &ms, ctx));
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = vadd;
  kp.gridDimX = n / 256;
  kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 256;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CU_OK(cuGraphAddKernelNode(&kernel, g, &set_c, 1, &kp));
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = c;
  cp.dstDevice = b;
  cp.WidthInBytes = bytes;
  cp.Height = cp.Depth = 1;
  CU_OK(cuGraphAddMemcpyNode(&copy, g, &kernel, 1, &cp, ctx));
  CUDA_HOST_NODE_PARAMS hp{on_host, nullptr};
  CU_OK(cuGraphAddHostNode(&host, g, &copy, 1, &hp));
  CUevent ev;
  CU_OK(cuEventCreate(&ev, CU_EVENT_DEFAULT));
  CU_OK(cuGraphAddEventRecordNode(&record, g, &copy, 1, ev));

  CUgraphNode from[8], to[8];
  num = 8;
  CU_OK(cuGraphGetEdges(g, from, to, nullptr, &num));
  CHECK(num == 4);
  num = 8;
  CU_OK(cuGraphNodeGetDependentNodes(copy, to, nullptr, &num));
  CHECK(num == 2);
  CUgraphNodeType type;
  CU_OK(cuGraphNodeGetType(kernel, &type));
  CHECK(type == CU_GRAPH_NODE_TYPE_KERNEL);
  CUDA_KERNEL_NODE_PARAMS kback{};
  CU_OK(cuGraphKernelNodeGetParams(kernel, &kback));
  CHECK(kback.func == vadd && kback.gridDimX == n / 256 && kback.blockDimX == 256);
  CHECK(kback.kernelParams && *static_cast<CUdeviceptr*>(kback.kernelParams[2]) == c &&
        *static_cast<int*>(kback.kernelParams[3]) == count);
  CUDA_MEMCPY3D cback{};
  CU_OK(cuGraphMemcpyNodeGetParams(copy, &cback));
  CHECK(cback.srcDevice == c && cback.dstDevice == b && cback.WidthInBytes == bytes);

  CUgraphExec gx;
  CUgraphNode error_node = nullptr;
  char log[64] = "x";
  CU_OK(cuGraphInstantiate_v2(&gx, g, &error_node, log, sizeof log));
  CHECK(error_node == nullptr && log[0] == '\0');
  CU_OK(cuGraphLaunch(gx, s));
  CU_OK(cuStreamSynchronize(s));
  CHECK(all(read_back(b, bytes), 0x7));
  CHECK(g_host_runs == 1);
  CU_OK(cuEventQuery(ev));

  // Set params on the executable graph; update it from a changed clone.
  ms.value = 0x8;
  CU_OK(cuGraphExecMemsetNodeSetParams(gx, set_c, &ms, ctx));
  CU_OK(cuGraphLaunch(gx, s));
  CU_OK(cuStreamSynchronize(s));
  CHECK(all(read_back(b, bytes), 0x8));
  CUgraph clone;
  CU_OK(cuGraphClone(&clone, g));
  CUgraphNode set_c_clone;
  CU_OK(cuGraphNodeFindInClone(&set_c_clone, set_c, clone));
  ms.value = 0x9;
  CU_OK(cuGraphMemsetNodeSetParams(set_c_clone, &ms));
  CUgraphExecUpdateResultInfo info{};
  CU_OK(cuGraphExecUpdate(gx, clone, &info));
  CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
  CU_OK(cuGraphLaunch(gx, s));
  CU_OK(cuStreamSynchronize(s));
  CHECK(all(read_back(b, bytes), 0x9));
  CHECK(g_host_runs == 3);

  // A child graph, the generic node API, the legacy capture binding.
  CUgraph parent;
  CU_OK(cuGraphCreate(&parent, 0));
  CUgraphNode child, generic;
  CU_OK(cuGraphAddChildGraphNode(&child, parent, nullptr, 0, graph));
  CUgraphNodeParams np{};
  np.type = CU_GRAPH_NODE_TYPE_MEMSET;
  np.memset.dst = a;
  np.memset.value = 0x5;
  np.memset.elementSize = 1;
  np.memset.width = bytes;
  np.memset.height = 1;
  np.memset.ctx = ctx;
  CU_OK(cuGraphAddNode(&generic, parent, &child, nullptr, 1, &np));
  CUgraphExec px;
  CU_OK(cuGraphInstantiateWithFlags(&px, parent, 0));
  CU_OK(cuGraphLaunch(px, s));
  CU_OK(cuStreamSynchronize(s));
  CHECK(all(read_back(a, bytes), 0x5));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  CU_OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
#pragma GCC diagnostic pop
  CU_OK(cuGraphLaunch(gx, s));
  CUgraph outer;
  CU_OK(cuStreamEndCapture(s, &outer));
  CU_OK(cuGraphGetRootNodes(outer, nullptr, &num));
  CHECK(num == 1);
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
  CU_OK(cuThreadExchangeStreamCaptureMode(&mode));
  CU_OK(cuThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);

  // Pageable host memory is a graph copy's too (e2e_driver_graphs_pageable.cu);
  // bogus handles are refused.
  std::vector<unsigned char> host_buf(bytes);
  CUDA_MEMCPY3D from_host = cp;
  from_host.srcMemoryType = CU_MEMORYTYPE_HOST;
  from_host.srcHost = host_buf.data();
  CUgraphNode bad;
  CU_OK(cuGraphAddMemcpyNode(&bad, g, nullptr, 0, &from_host, ctx));
  CU_OK(cuGraphDestroyNode(bad));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphDestroy(reinterpret_cast<CUgraph>(0x1234)));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphLaunch(reinterpret_cast<CUgraphExec>(0x1234), s));
  kp.func = reinterpret_cast<CUfunction>(0x4321);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuGraphAddKernelNode(&bad, g, nullptr, 0, &kp));

  // Memory a graph allocates and frees.
  CUDA_MEM_ALLOC_NODE_PARAMS ap{};
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  ap.bytesize = bytes;
  CUgraph mg;
  CU_OK(cuGraphCreate(&mg, 0));
  CUgraphNode alloc_node, fill_node, free_node;
  CU_OK(cuGraphAddMemAllocNode(&alloc_node, mg, nullptr, 0, &ap));
  CHECK(ap.dptr != 0);
  CUDA_MEMSET_NODE_PARAMS fill{};
  fill.dst = ap.dptr;
  fill.value = 0x42;
  fill.elementSize = 1;
  fill.width = bytes;
  fill.height = 1;
  CU_OK(cuGraphAddMemsetNode(&fill_node, mg, &alloc_node, 1, &fill, ctx));
  CU_OK(cuGraphAddMemFreeNode(&free_node, mg, &fill_node, 1, ap.dptr));
  CUDA_MEM_ALLOC_NODE_PARAMS ap_back{};
  CU_OK(cuGraphMemAllocNodeGetParams(alloc_node, &ap_back));
  CHECK(ap_back.dptr == ap.dptr && ap_back.bytesize == bytes);
  CUdeviceptr freed = 0;
  CU_OK(cuGraphMemFreeNodeGetParams(free_node, &freed));
  CHECK(freed == ap.dptr);
  CUgraphExec mx;
  CU_OK(cuGraphInstantiate(&mx, mg, 0));
  CU_OK(cuGraphLaunch(mx, s));
  CU_OK(cuStreamSynchronize(s));
  CU_OK(cuGraphExecDestroy(mx));
  CU_OK(cuGraphDestroy(mg));

  // Memory a graph leaves allocated: the application's to copy to and free,
  // once, with cuMemFree, after the graph is gone.
  CU_OK(cuGraphCreate(&mg, 0));
  CU_OK(cuGraphAddMemAllocNode(&alloc_node, mg, nullptr, 0, &ap));
  fill.dst = ap.dptr;
  CU_OK(cuGraphAddMemsetNode(&fill_node, mg, &alloc_node, 1, &fill, ctx));
  CU_OK(cuGraphInstantiate(&mx, mg, 0));
  CU_OK(cuGraphLaunch(mx, s));
  CU_OK(cuStreamSynchronize(s));
  CU_OK(cuGraphExecDestroy(mx));
  CU_OK(cuGraphDestroy(mg));
  std::vector<unsigned char> kept(bytes);
  CU_OK(cuMemcpyDtoH(kept.data(), ap.dptr, bytes));
  CHECK(all(kept, 0x42));
  std::vector<unsigned char> kept_in(bytes, 0x24);
  CU_OK(cuMemcpyHtoD(ap.dptr, kept_in.data(), bytes));
  CU_OK(cuMemsetD8(ap.dptr + 1, 0x25, 1));
  CU_OK(cuMemcpyDtoH(kept.data(), ap.dptr, bytes));
  CHECK(kept[0] == 0x24 && kept[1] == 0x25 && kept[bytes - 1] == 0x24);
  CU_OK(cuMemFree(ap.dptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(ap.dptr));
  // Ended with no output after a capture into an existing graph, and after a plain one.
  CU_OK(cuGraphCreate(&mg, 0));
  CU_OK(cuStreamBeginCaptureToGraph(s, mg, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(cuMemsetD8Async(a, 0x6, bytes, s));
  CU_OK(cuStreamEndCapture(s, nullptr));
  CU_OK(cuGraphGetNodes(mg, nullptr, &num));
  CHECK(num == 1);
  CU_OK(cuGraphDestroy(mg));
  CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(cuStreamEndCapture(s, nullptr));

  // A user object held by a graph.
  CUuserObject object;
  CU_OK(cuUserObjectCreate(&object, nullptr, on_destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CU_OK(cuUserObjectRetain(object, 1));
  CU_OK(cuGraphRetainUserObject(parent, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
  CU_OK(cuUserObjectRelease(object, 1));
  CHECK(g_destroyed == 0);

  // A kernel node outliving its module: the launch fails, the session goes on.
  CUmodule short_lived;
  CU_OK(cuModuleLoad(&short_lived, RGPU_PTX_FILE));
  CUfunction gone;
  CU_OK(cuModuleGetFunction(&gone, short_lived, "vadd"));
  CUgraph orphan;
  CU_OK(cuGraphCreate(&orphan, 0));
  kp.func = gone;
  CUgraphNode orphan_kernel;
  CU_OK(cuGraphAddKernelNode(&orphan_kernel, orphan, nullptr, 0, &kp));
  CUgraphExec orphan_exec;
  CU_OK(cuGraphInstantiate(&orphan_exec, orphan, 0));
  CU_OK(cuModuleUnload(short_lived));
  cuGraphLaunch(orphan_exec, s);
  CUresult after = cuStreamSynchronize(s);
  CHECK(after == CUDA_SUCCESS || after == CUDA_ERROR_INVALID_HANDLE);
  CU_OK(cuMemsetD8(a, 1, bytes));
  CU_OK(cuGraphExecDestroy(orphan_exec));
  CU_OK(cuGraphDestroy(orphan));

  {
    // IF/ELSE on a handle whose default (0) each launch assigns: the else body runs.
    CUgraph cg;
    CU_OK(cuGraphCreate(&cg, 0));
    CUgraphConditionalHandle h;
    CU_OK(cuGraphConditionalHandleCreate(&h, cg, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUgraphNodeParams p{};
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h;
    p.conditional.type = CU_GRAPH_COND_TYPE_IF;
    p.conditional.size = 2;
    p.conditional.ctx = ctx;
    CUgraphNode cond;
    CU_OK(cuGraphAddNode(&cond, cg, nullptr, nullptr, 0, &p));
    CHECK(p.conditional.phGraph_out != nullptr);
    CUDA_MEMSET_NODE_PARAMS ms{};
    ms.dst = c;
    ms.elementSize = 1;
    ms.width = bytes;
    ms.height = 1;
    CUgraphNode set;
    ms.value = 0x21;
    CU_OK(cuGraphAddMemsetNode(&set, p.conditional.phGraph_out[0], nullptr, 0, &ms, ctx));
    ms.value = 0x31;
    CU_OK(cuGraphAddMemsetNode(&set, p.conditional.phGraph_out[1], nullptr, 0, &ms, ctx));
    CUgraphExec cx;
    CU_OK(cuGraphInstantiate(&cx, cg, 0));
    CU_OK(cuGraphLaunch(cx, s));
    CU_OK(cuStreamSynchronize(s));
    auto got = read_back(c, bytes);
    CHECK(got[0] == 0x31 && got[bytes - 1] == 0x31);
    // A context of another device than the graph's is refused.
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphConditionalHandleCreate(&h, cg, reinterpret_cast<CUcontext>(&p), 0, 0));
    CU_OK(cuGraphExecDestroy(cx));
    CU_OK(cuGraphDestroy(cg));
  }

  cuuint64_t high = 1;
  CU_OK(cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &high));
  CU_OK(cuDeviceGraphMemTrim(dev));

  CU_OK(cuGraphExecDestroy(exec));
  CU_OK(cuGraphExecDestroy(gx));
  CU_OK(cuGraphExecDestroy(px));
  CU_OK(cuGraphDestroy(outer));
  CU_OK(cuGraphDestroy(parent));
  for (int i = 0; i < 200 && g_destroyed == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(g_destroyed == 1);
  CU_OK(cuGraphDestroy(clone));
  CU_OK(cuGraphDestroy(g));
  CU_OK(cuGraphDestroy(graph));
  CU_OK(cuCtxSynchronize());
  return finish();
}
