// Graphs built node by node: dependencies, every node kind rgpu runs
// (kernel, memcpy, memset, empty, child graph, event record/wait, host),
// parameters read back and changed in the graph and in the executable graph,
// executable-graph update, clones, enabling nodes, DOT output, and bad
// handles refused.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "check.h"

__device__ int counter[64];

__global__ void add(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

static int g_host_sum = 0;
static void host_add(void* arg) { g_host_sum += *static_cast<int*>(arg); }

static std::atomic<int> g_destroyed{0};
static void destroy_object(void* arg) { g_destroyed += *static_cast<int*>(arg); }

int main() {
  const size_t n = 1 << 16;
  unsigned char *a, *b, *c;
  OK(cudaMalloc(&a, n));
  OK(cudaMalloc(&b, n));
  OK(cudaMalloc(&c, n));
  OK(cudaMemset(a, 0, n));
  OK(cudaMemset(b, 0, n));
  OK(cudaMemset(c, 0, n));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));

  // memset(a) -> copy(a->b) -> kernel; memset(c) independent; host after both.
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaMemsetParams ms{};
  ms.dst = a;
  ms.value = 0x11;
  ms.elementSize = 1;
  ms.width = n;
  ms.height = 1;
  cudaGraphNode_t set_a, copy_ab, kernel, set_c, host;
  OK(cudaGraphAddMemsetNode(&set_a, g, nullptr, 0, &ms));
  OK(cudaGraphAddMemcpyNode1D(&copy_ab, g, &set_a, 1, b, a, n, cudaMemcpyDeviceToDevice));
  int* ints = reinterpret_cast<int*>(c);
  int v = 5, count = static_cast<int>(n / 4);
  void* args[] = {&ints, &v, &count};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(add);
  kp.gridDim = dim3((count + 255) / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  OK(cudaGraphAddKernelNode(&kernel, g, &copy_ab, 1, &kp));
  cudaMemsetParams ms32{};
  ms32.dst = c;
  ms32.value = 0x01020304;
  ms32.elementSize = 4;
  ms32.width = n / 4;
  ms32.height = 1;
  OK(cudaGraphAddMemsetNode(&set_c, g, nullptr, 0, &ms32));
  int weight = 10;
  cudaHostNodeParams hp{host_add, &weight};
  cudaGraphNode_t before_host[] = {kernel, set_c};
  OK(cudaGraphAddHostNode(&host, g, before_host, 2, &hp));

  size_t num = 0;
  OK(cudaGraphGetNodes(g, nullptr, &num));
  CHECK(num == 5);
  OK(cudaGraphGetRootNodes(g, nullptr, &num));
  CHECK(num == 2);
  OK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &num));
  CHECK(num == 4);
  cudaGraphNode_t deps[4];
  num = 4;
  OK(cudaGraphNodeGetDependencies(host, deps, nullptr, &num));
  CHECK(num == 2 && deps[0] == kernel && deps[1] == set_c);
  num = 4;
  OK(cudaGraphNodeGetDependentNodes(set_a, deps, nullptr, &num));
  CHECK(num == 1 && deps[0] == copy_ab);

  // Parameters read back as given.
  cudaKernelNodeParams kback{};
  OK(cudaGraphKernelNodeGetParams(kernel, &kback));
  CHECK(kback.func == reinterpret_cast<void*>(add));
  CHECK(kback.gridDim.x == kp.gridDim.x && kback.blockDim.x == 256);
  CHECK(kback.kernelParams && *static_cast<int**>(kback.kernelParams[0]) == ints &&
        *static_cast<int*>(kback.kernelParams[1]) == 5);
  cudaMemsetParams msback{};
  OK(cudaGraphMemsetNodeGetParams(set_c, &msback));
  CHECK(msback.dst == c && msback.value == 0x01020304u && msback.elementSize == 4 && msback.width == n / 4);
  cudaMemcpy3DParms cp{};
  OK(cudaGraphMemcpyNodeGetParams(copy_ab, &cp));
  CHECK(cp.dstPtr.ptr == b && cp.srcPtr.ptr == a && cp.extent.width == n && cp.extent.height == 1);
  cudaHostNodeParams hback{};
  OK(cudaGraphHostNodeGetParams(host, &hback));
  CHECK(hback.fn == host_add && hback.userData == &weight);

  // Launch attributes of kernel nodes.
  cudaKernelNodeAttrValue attr{};
  attr.priority = 3;
  OK(cudaGraphKernelNodeSetAttribute(kernel, cudaLaunchAttributePriority, &attr));
  cudaKernelNodeAttrValue attr_back{};
  OK(cudaGraphKernelNodeGetAttribute(kernel, cudaLaunchAttributePriority, &attr_back));
  CHECK(attr_back.priority == 3);
  attr.accessPolicyWindow.base_ptr = c;
  attr.accessPolicyWindow.num_bytes = n;
  attr.accessPolicyWindow.hitRatio = 0.5f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  OK(cudaGraphKernelNodeSetAttribute(kernel, cudaLaunchAttributeAccessPolicyWindow, &attr));
  // Memory the session does not own; attributes a node does not take; not a kernel node.
  attr.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(0x10);
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaGraphKernelNodeSetAttribute(kernel, cudaLaunchAttributeAccessPolicyWindow, &attr));
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaGraphKernelNodeSetAttribute(kernel, cudaLaunchAttributeProgrammaticEvent, &attr));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphKernelNodeGetAttribute(set_a, cudaLaunchAttributePriority, &attr));
  cudaGetLastError();

  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  unsigned long long flags = 1;
  OK(cudaGraphExecGetFlags(x, &flags));
  CHECK(flags == 0);
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(b, n), 0x11));
  std::vector<unsigned char> cc = read_back(c, n);
  unsigned word;
  std::memcpy(&word, cc.data() + n - 4, 4);
  CHECK(word == 0x01020304u);
  CHECK(g_host_sum == 10);

  // Changes to the graph reach a new instantiation, not an existing one.
  ms.value = 0x22;
  OK(cudaGraphMemsetNodeSetParams(set_a, &ms));
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(b, n), 0x11));
  // ...unless set on the executable graph.
  OK(cudaGraphExecMemsetNodeSetParams(x, set_a, &ms));
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(b, n), 0x22));
  CHECK(g_host_sum == 30);

  // Disabled nodes do not run; only kernel, memset and memcpy nodes can be
  // disabled, as in CUDA.
  unsigned enabled = 0;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphNodeSetEnabled(x, host, 0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphNodeGetEnabled(x, host, &enabled));
  OK(cudaGraphNodeGetEnabled(x, set_a, &enabled));
  CHECK(enabled == 1);
  OK(cudaGraphNodeSetEnabled(x, set_a, 0));
  OK(cudaGraphNodeGetEnabled(x, set_a, &enabled));
  CHECK(enabled == 0);
  OK(cudaMemset(a, 0x33, n));
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(b, n), 0x33));
  CHECK(g_host_sum == 40);
  OK(cudaGraphNodeSetEnabled(x, set_a, 1));

  // Executable-graph update from a graph of the same shape.
  cudaGraph_t clone;
  OK(cudaGraphClone(&clone, g));
  cudaGraphNode_t set_a_clone, kernel_clone;
  OK(cudaGraphNodeFindInClone(&set_a_clone, set_a, clone));
  // Clones keep their kernel nodes' attributes; they can be copied back.
  OK(cudaGraphNodeFindInClone(&kernel_clone, kernel, clone));
  OK(cudaGraphKernelNodeGetAttribute(kernel_clone, cudaLaunchAttributePriority, &attr_back));
  CHECK(attr_back.priority == 3);
  attr.priority = 1;
  OK(cudaGraphKernelNodeSetAttribute(kernel_clone, cudaLaunchAttributePriority, &attr));
  OK(cudaGraphKernelNodeCopyAttributes(kernel, kernel_clone));
  OK(cudaGraphKernelNodeGetAttribute(kernel, cudaLaunchAttributePriority, &attr_back));
  CHECK(attr_back.priority == 1);
  CHECK(set_a_clone != set_a);
  ms.value = 0x33;
  OK(cudaGraphMemsetNodeSetParams(set_a_clone, &ms));
  cudaGraphExecUpdateResultInfo info{};
  OK(cudaGraphExecUpdate(x, clone, &info));
  CHECK(info.result == cudaGraphExecUpdateSuccess);
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(b, n), 0x33));
  // A graph of another shape cannot update it.
  cudaGraphNode_t extra;
  OK(cudaGraphAddEmptyNode(&extra, clone, nullptr, 0));
  EXPECT_STATUS(cudaErrorGraphExecUpdateFailure, cudaGraphExecUpdate(x, clone, &info));
  CHECK(info.result == cudaGraphExecUpdateErrorTopologyChanged);
  cudaGetLastError();

  // Dependencies removed and added; a node destroyed.
  OK(cudaGraphRemoveDependencies(g, &set_a, &copy_ab, nullptr, 1));
  OK(cudaGraphGetRootNodes(g, nullptr, &num));
  CHECK(num == 3);
  OK(cudaGraphAddDependencies(g, &set_a, &copy_ab, nullptr, 1));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddDependencies(g, &set_a, &copy_ab, nullptr, 1));
  cudaGetLastError();
  OK(cudaGraphDestroyNode(extra));
  OK(cudaGraphGetNodes(clone, nullptr, &num));
  CHECK(num == 5);

  // Child graph, event record and wait nodes, a symbol copy.
  cudaGraph_t parent;
  OK(cudaGraphCreate(&parent, 0));
  cudaEvent_t ev;
  OK(cudaEventCreate(&ev));
  cudaGraphNode_t child, record, wait, to_symbol, back_node;
  OK(cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, g));
  OK(cudaGraphAddEventRecordNode(&record, parent, &child, 1, ev));
  OK(cudaGraphAddEventWaitNode(&wait, parent, &record, 1, ev));
  OK(cudaGraphAddMemcpyNodeToSymbol(&to_symbol, parent, &wait, 1, counter, b, sizeof(int) * 64, 0,
                                     cudaMemcpyDeviceToDevice));
  OK(cudaGraphAddMemcpyNodeFromSymbol(&back_node, parent, &to_symbol, 1, a, counter, sizeof(int) * 64, 0,
                                       cudaMemcpyDeviceToDevice));
  cudaEvent_t got;
  OK(cudaGraphEventRecordNodeGetEvent(record, &got));
  CHECK(got == ev);
  OK(cudaGraphEventWaitNodeGetEvent(wait, &got));
  CHECK(got == ev);
  cudaGraph_t embedded;
  OK(cudaGraphChildGraphNodeGetGraph(child, &embedded));
  OK(cudaGraphGetNodes(embedded, nullptr, &num));
  CHECK(num == 5);
  OK(cudaMemset(a, 0, n));
  cudaGraphExec_t px;
  OK(cudaGraphInstantiate(&px, parent, 0));
  OK(cudaGraphLaunch(px, s));
  OK(cudaStreamSynchronize(s));
  OK(cudaEventQuery(ev));
  std::vector<unsigned char> aa = read_back(a, n);
  CHECK(aa[0] == 0x22 && aa[sizeof(int) * 64 - 1] == 0x22 && aa[sizeof(int) * 64] == 0x22);
  CHECK(g_host_sum == 60);

  // The generic node API.
  cudaGraphNodeParams gp{};
  gp.type = cudaGraphNodeTypeMemset;
  gp.memset.dst = c;
  gp.memset.value = 0x44;
  gp.memset.elementSize = 1;
  gp.memset.width = n;
  gp.memset.height = 1;
  cudaGraph_t gen;
  OK(cudaGraphCreate(&gen, 0));
  cudaGraphNode_t gnode;
  OK(cudaGraphAddNode(&gnode, gen, nullptr, nullptr, 0, &gp));
  cudaGraphExec_t gx;
  OK(cudaGraphInstantiate(&gx, gen, 0));
  gp.memset.value = 0x45;
  OK(cudaGraphExecNodeSetParams(gx, gnode, &gp));
  OK(cudaGraphLaunch(gx, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(c, n), 0x45));

  cudaGraphNode_t bad;
  // Memory the graph allocates, uses and frees.
  cudaMemAllocNodeParams ap{};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
  cudaMemAccessDesc own{cudaMemLocation{cudaMemLocationTypeDevice, 0}, cudaMemAccessFlagsProtReadWrite};
  ap.accessDescs = &own;
  ap.accessDescCount = 1;
  ap.bytesize = n;
  cudaGraph_t mg;
  OK(cudaGraphCreate(&mg, 0));
  cudaGraphNode_t alloc_node, use_node, copy_out, free_node;
  OK(cudaGraphAddMemAllocNode(&alloc_node, mg, nullptr, 0, &ap));
  CHECK(ap.dptr != nullptr);
  cudaMemsetParams on_alloc{};
  on_alloc.dst = ap.dptr;
  on_alloc.value = 0x66;
  on_alloc.elementSize = 1;
  on_alloc.width = n;
  on_alloc.height = 1;
  OK(cudaGraphAddMemsetNode(&use_node, mg, &alloc_node, 1, &on_alloc));
  OK(cudaGraphAddMemcpyNode1D(&copy_out, mg, &use_node, 1, b, ap.dptr, n, cudaMemcpyDeviceToDevice));
  OK(cudaGraphAddMemFreeNode(&free_node, mg, &copy_out, 1, ap.dptr));
  cudaMemAllocNodeParams ap_back{};
  OK(cudaGraphMemAllocNodeGetParams(alloc_node, &ap_back));
  CHECK(ap_back.dptr == ap.dptr && ap_back.bytesize == n && ap_back.accessDescCount == 1 &&
        ap_back.poolProps.location.id == 0);
  void* freed = nullptr;
  OK(cudaGraphMemFreeNodeGetParams(free_node, &freed));
  CHECK(freed == ap.dptr);
  cudaGraphExec_t mx;
  OK(cudaGraphInstantiate(&mx, mg, 0));
  OK(cudaGraphLaunch(mx, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(b, n), 0x66));
  // Memory its own graph frees is that graph's alone: nothing else frees it.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(ap.dptr));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFreeAsync(ap.dptr, s));
  cudaGetLastError();

  // Memory a graph allocates and leaves allocated (as NVIDIA's graphMemoryFootprint
  // sample does): after the launch it is device memory the application copies
  // to, reads, sets and frees, once; destroying the graph leaves it allocated.
  cudaMemAllocNodeParams kept{};
  kept.poolProps = ap.poolProps;
  kept.bytesize = n;
  cudaGraph_t kg;
  OK(cudaGraphCreate(&kg, 0));
  cudaGraphNode_t kept_alloc, kept_set;
  OK(cudaGraphAddMemAllocNode(&kept_alloc, kg, nullptr, 0, &kept));
  cudaMemsetParams on_kept = on_alloc;
  on_kept.dst = kept.dptr;
  on_kept.value = 0x5a;
  OK(cudaGraphAddMemsetNode(&kept_set, kg, &kept_alloc, 1, &on_kept));
  cudaGraphExec_t kx;
  OK(cudaGraphInstantiate(&kx, kg, 0));
  OK(cudaGraphLaunch(kx, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(kept.dptr, n), 0x5a));
  cudaPointerAttributes kept_attr{};
  OK(cudaPointerGetAttributes(&kept_attr, kept.dptr));
  CHECK(kept_attr.type == cudaMemoryTypeDevice && kept_attr.device == 0);
  std::vector<unsigned char> kept_in(n, 0x3c);
  OK(cudaMemcpy(kept.dptr, kept_in.data(), n, cudaMemcpyDefault));
  OK(cudaMemset(static_cast<unsigned char*>(kept.dptr) + n / 2, 0x3d, n / 2));
  std::vector<unsigned char> kept_out(n);
  OK(cudaMemcpy(kept_out.data(), kept.dptr, n, cudaMemcpyDefault));
  CHECK(kept_out[0] == 0x3c && kept_out[n / 2 - 1] == 0x3c && kept_out[n / 2] == 0x3d && kept_out[n - 1] == 0x3d);
  OK(cudaMemcpy(c, kept.dptr, n, cudaMemcpyDeviceToDevice));
  CHECK(read_back(c, n) == kept_out);
  OK(cudaGraphExecDestroy(kx));
  OK(cudaGraphDestroy(kg));
  CHECK(read_back(kept.dptr, n) == kept_out);
  OK(cudaFree(kept.dptr));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(kept.dptr));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy(kept_out.data(), kept.dptr, n, cudaMemcpyDeviceToHost));
  cudaGetLastError();
  // cudaFreeAsync frees it too, in stream order.
  OK(cudaGraphCreate(&kg, 0));
  OK(cudaGraphAddMemAllocNode(&kept_alloc, kg, nullptr, 0, &kept));
  OK(cudaGraphInstantiate(&kx, kg, 0));
  OK(cudaGraphLaunch(kx, s));
  OK(cudaMemsetAsync(kept.dptr, 0x11, n, s));
  OK(cudaFreeAsync(kept.dptr, s));
  OK(cudaStreamSynchronize(s));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(kept.dptr));
  cudaGetLastError();
  OK(cudaGraphExecDestroy(kx));
  OK(cudaGraphDestroy(kg));
  // Other GPUs' access is not offered; a free node frees what a graph allocated.
  cudaMemAccessDesc other{cudaMemLocation{cudaMemLocationTypeDevice, 1}, cudaMemAccessFlagsProtReadWrite};
  ap.accessDescs = &other;
  EXPECT_STATUS(cudaErrorNotSupported, cudaGraphAddMemAllocNode(&bad, mg, nullptr, 0, &ap));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemFreeNode(&bad, mg, nullptr, 0, a + 1));
  cudaGetLastError();
  OK(cudaGraphExecDestroy(mx));
  // The generic node API hands out the address too.
  cudaGraphNodeParams galloc{};
  galloc.type = cudaGraphNodeTypeMemAlloc;
  galloc.alloc.poolProps = ap.poolProps;
  galloc.alloc.bytesize = 4096;
  cudaGraphNode_t gen_alloc;
  OK(cudaGraphAddNode(&gen_alloc, mg, nullptr, nullptr, 0, &galloc));
  CHECK(galloc.alloc.dptr != nullptr);
  cudaGraphNodeParams gfree{};
  gfree.type = cudaGraphNodeTypeMemFree;
  gfree.free.dptr = galloc.alloc.dptr;
  cudaGraphNode_t gen_free;
  OK(cudaGraphAddNode(&gen_free, mg, &gen_alloc, nullptr, 1, &gfree));
  OK(cudaGraphDestroy(mg));

  // Memory the session does not own, nor past an allocation.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemcpyNode1D(&bad, gen, nullptr, 0, a, b, n + 1,
                                                                cudaMemcpyDeviceToDevice));
  cudaGetLastError();

  // DOT output is written here.
  const char* dot_path = "/tmp/rgpu-e2e-graph.dot";
  OK(cudaGraphDebugDotPrint(g, dot_path, 0));
  FILE* f = std::fopen(dot_path, "r");
  CHECK(f != nullptr);
  if (f) {
    char buf[4096] = {};
    size_t got_bytes = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    CHECK(got_bytes > 0 && std::string(buf).find("digraph") != std::string::npos);
  }
  std::remove(dot_path);

  // Graph memory attributes.
  unsigned long long used = 1;
  OK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &used));
  unsigned long long zero = 0;
  OK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &zero));
  cudaGetLastError();

  // A user object lives while the application, a graph or an executable
  // graph holds a reference; its destructor then runs in this process.
  int token = 3;
  cudaUserObject_t object;
  OK(cudaUserObjectCreate(&object, &token, destroy_object, 2, cudaUserObjectNoDestructorSync));
  OK(cudaUserObjectRelease(object, 1));
  cudaGraph_t holder;
  OK(cudaGraphCreate(&holder, 0));
  OK(cudaGraphRetainUserObject(holder, object, 1, cudaGraphUserObjectMove));
  cudaGraphNode_t holder_node;
  OK(cudaGraphAddEmptyNode(&holder_node, holder, nullptr, 0));
  cudaGraphExec_t holder_exec;
  OK(cudaGraphInstantiate(&holder_exec, holder, 0));
  // The application moved its last reference: it cannot release it again.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaUserObjectRelease(object, 1));
  cudaGetLastError();
  OK(cudaGraphDestroy(holder));
  CHECK(g_destroyed == 0);
  OK(cudaGraphExecDestroy(holder_exec));
  for (int i = 0; i < 200 && g_destroyed == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(g_destroyed == 3);
  cudaUserObject_t second;
  OK(cudaUserObjectCreate(&second, &token, destroy_object, 1, cudaUserObjectNoDestructorSync));
  OK(cudaGraphCreate(&holder, 0));
  OK(cudaGraphRetainUserObject(holder, second, 2, 0));
  OK(cudaGraphReleaseUserObject(holder, second, 1));
  OK(cudaUserObjectRelease(second, 1));
  CHECK(g_destroyed == 3);
  OK(cudaGraphDestroy(holder));
  for (int i = 0; i < 200 && g_destroyed == 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(g_destroyed == 6);

  // Bad handles.
  cudaGraph_t bogus_graph = reinterpret_cast<cudaGraph_t>(0x1234);
  cudaGraphNode_t bogus_node = reinterpret_cast<cudaGraphNode_t>(0x5678);
  cudaGraphExec_t bogus_exec = reinterpret_cast<cudaGraphExec_t>(0x9abc);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphDestroy(bogus_graph));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddEmptyNode(&bad, bogus_graph, nullptr, 0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddEmptyNode(&bad, g, &bogus_node, 1));
  cudaGraphNodeType type;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphNodeGetType(bogus_node, &type));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphLaunch(bogus_exec, s));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphExecDestroy(bogus_exec));
  // A node of another graph is not a dependency here.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddEmptyNode(&bad, gen, &set_a, 1));
  cudaGetLastError();

  // A graph moved into a child graph node (XLA's command buffers) is the
  // node's own: the executable graph updates its nodes, and the application
  // no longer destroys it. A copied child graph's nodes are not updated so.
  cudaGraph_t moved, moved_holder;
  OK(cudaGraphCreate(&moved, 0));
  OK(cudaGraphCreate(&moved_holder, 0));
  cudaGraphNode_t moved_copy, mover;
  OK(cudaGraphAddMemcpyNode1D(&moved_copy, moved, nullptr, 0, c, a, 64, cudaMemcpyDeviceToDevice));
  cudaGraphNodeParams mp{};
  mp.type = cudaGraphNodeTypeGraph;
  mp.graph.graph = moved;
  mp.graph.ownership = cudaGraphChildGraphOwnershipMove;
  OK(cudaGraphAddNode(&mover, moved_holder, nullptr, nullptr, 0, &mp));
  cudaGraph_t held;
  OK(cudaGraphChildGraphNodeGetGraph(mover, &held));
  CHECK(held == moved);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphDestroy(moved));
  cudaGetLastError();
  cudaGraphExec_t hx;
  OK(cudaGraphInstantiate(&hx, moved_holder, 0));
  OK(cudaMemset(a, 0x31, 64));
  OK(cudaMemset(b, 0x32, 64));
  OK(cudaMemset(c, 0, 64));
  OK(cudaGraphLaunch(hx, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(c, 64), 0x31));
  OK(cudaGraphExecMemcpyNodeSetParams1D(hx, moved_copy, c, b, 64, cudaMemcpyDeviceToDevice));
  OK(cudaGraphLaunch(hx, s));
  OK(cudaStreamSynchronize(s));
  CHECK(all(read_back(c, 64), 0x32));
  cudaGraph_t copied, copy_holder;
  OK(cudaGraphCreate(&copied, 0));
  OK(cudaGraphCreate(&copy_holder, 0));
  cudaGraphNode_t copied_copy, copier;
  OK(cudaGraphAddMemcpyNode1D(&copied_copy, copied, nullptr, 0, c, a, 64, cudaMemcpyDeviceToDevice));
  OK(cudaGraphAddChildGraphNode(&copier, copy_holder, nullptr, 0, copied));
  cudaGraphExec_t cx;
  OK(cudaGraphInstantiate(&cx, copy_holder, 0));
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaGraphExecMemcpyNodeSetParams1D(cx, copied_copy, c, b, 64, cudaMemcpyDeviceToDevice));
  cudaGetLastError();
  OK(cudaGraphExecDestroy(cx));
  OK(cudaGraphDestroy(copy_holder));
  OK(cudaGraphDestroy(copied));
  OK(cudaGraphExecDestroy(hx));
  OK(cudaGraphDestroy(moved_holder));

  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphExecDestroy(px));
  OK(cudaGraphExecDestroy(gx));
  OK(cudaGraphDestroy(parent));
  OK(cudaGraphDestroy(clone));
  OK(cudaGraphDestroy(gen));
  OK(cudaGraphDestroy(g));
  // Destroyed graphs and their nodes are gone.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphNodeGetType(set_a, &type));
  cudaGetLastError();
  OK(cudaDeviceSynchronize());
  return finish();
}
