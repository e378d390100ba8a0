// Graphs built node by node on a real GPU: kernel, memset, device-to-device
// memcpy, host, event record/wait, child graph and memory allocation/free
// nodes with explicit dependencies; kernel parameters changed in the executable graph, a node
// disabled, an executable graph updated from a modified clone. Every result
// is checked on the host.
#include <vector>

#include "corpus.h"

__global__ void iota_scaled(int* out, int scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * scale;
}

__global__ void add_arrays(int* out, const int* a, const int* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

static int g_host_sum = 0;
static void host_add(void* arg) { g_host_sum += *static_cast<int*>(arg); }

static const int kN = 1 << 18;

static std::vector<int> read(const int* d) {
  std::vector<int> h(kN);
  CK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  return h;
}

// out[i] must be i * scale + fill (fill: the memset's bytes as an int).
static void check(const int* d, int scale, int fill, const char* what) {
  std::vector<int> h = read(d);
  int bad = 0;
  for (int i = 0; i < kN; ++i)
    if (h[i] != i * scale + fill) ++bad;
  EXPECT(bad == 0, "%s: %d wrong elements", what, bad);
  printf("%s: out[1000]=%d checksum=%016llx\n", what, h[1000],
         static_cast<unsigned long long>(fnv1a(h.data(), h.size() * sizeof(int))));
}

static cudaKernelNodeParams iota_params(void** args) {
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(iota_scaled);
  p.gridDim = dim3((kN + 255) / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  return p;
}

int main() {
  int *a, *b, *fill, *out;
  CK(cudaMalloc(&a, kN * sizeof(int)));
  CK(cudaMalloc(&b, kN * sizeof(int)));
  CK(cudaMalloc(&fill, kN * sizeof(int)));
  CK(cudaMalloc(&out, kN * sizeof(int)));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaEvent_t done;
  CK(cudaEventCreate(&done));

  // a = i * 3 and fill = 0x01010101 side by side; b = copy of fill;
  // out = a + b; then a host node and an event record.
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  int n = kN, scale = 3;
  void* iota_args[] = {&a, &scale, &n};
  cudaKernelNodeParams iota = iota_params(iota_args);
  cudaGraphNode_t k_iota, set_fill, copy_fill, k_add, host, record;
  CK(cudaGraphAddKernelNode(&k_iota, g, nullptr, 0, &iota));
  cudaMemsetParams ms{};
  ms.dst = fill;
  ms.value = 1;
  ms.elementSize = 1;
  ms.width = kN * sizeof(int);
  ms.height = 1;
  CK(cudaGraphAddMemsetNode(&set_fill, g, nullptr, 0, &ms));
  CK(cudaGraphAddMemcpyNode1D(&copy_fill, g, &set_fill, 1, b, fill, kN * sizeof(int), cudaMemcpyDeviceToDevice));
  void* add_args[] = {&out, &a, &b, &n};
  cudaKernelNodeParams add{};
  add.func = reinterpret_cast<void*>(add_arrays);
  add.gridDim = dim3((kN + 255) / 256);
  add.blockDim = dim3(256);
  add.kernelParams = add_args;
  cudaGraphNode_t before_add[] = {k_iota, copy_fill};
  CK(cudaGraphAddKernelNode(&k_add, g, before_add, 2, &add));
  int weight = 7;
  cudaHostNodeParams hp{host_add, &weight};
  CK(cudaGraphAddHostNode(&host, g, &k_add, 1, &hp));
  CK(cudaGraphAddEventRecordNode(&record, g, &k_add, 1, done));

  size_t nodes = 0, roots = 0, edges = 0;
  CK(cudaGraphGetNodes(g, nullptr, &nodes));
  CK(cudaGraphGetRootNodes(g, nullptr, &roots));
  CK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  printf("graph: %zu nodes, %zu roots, %zu edges\n", nodes, roots, edges);
  cudaKernelNodeParams back{};
  CK(cudaGraphKernelNodeGetParams(k_iota, &back));
  EXPECT(back.func == reinterpret_cast<void*>(iota_scaled), "kernel node function");
  EXPECT(*static_cast<int*>(back.kernelParams[1]) == 3, "kernel node argument");

  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0));
  CK(cudaGraphLaunch(x, s));
  CK(cudaEventSynchronize(done));
  CK(cudaStreamSynchronize(s));
  check(out, 3, 0x01010101, "first launch");
  EXPECT(g_host_sum == 7, "host node sum %d", g_host_sum);

  // A new kernel argument in the executable graph only.
  scale = 5;
  iota = iota_params(iota_args);
  CK(cudaGraphExecKernelNodeSetParams(x, k_iota, &iota));
  CK(cudaGraphLaunch(x, s));
  CK(cudaStreamSynchronize(s));
  check(out, 5, 0x01010101, "kernel argument changed");

  // Only kernel, memset and memcpy nodes can be disabled (CUDA refuses a
  // host node). With the memset disabled, what fill holds is copied.
  printf("disabling the host node: %s\n", cudaGetErrorName(cudaGraphNodeSetEnabled(x, host, 0)));
  CK(cudaGraphNodeSetEnabled(x, set_fill, 0));
  unsigned enabled = 1;
  CK(cudaGraphNodeGetEnabled(x, set_fill, &enabled));
  EXPECT(enabled == 0, "the memset node is still enabled");
  CK(cudaMemset(fill, 3, kN * sizeof(int)));
  CK(cudaGraphLaunch(x, s));
  CK(cudaStreamSynchronize(s));
  check(out, 5, 0x03030303, "memset node disabled");
  EXPECT(g_host_sum == 21, "host node sum %d", g_host_sum);
  CK(cudaGraphNodeSetEnabled(x, set_fill, 1));

  // A clone with another memset value updates the executable graph.
  cudaGraph_t clone;
  CK(cudaGraphClone(&clone, g));
  cudaGraphNode_t set_fill_clone;
  CK(cudaGraphNodeFindInClone(&set_fill_clone, set_fill, clone));
  ms.value = 2;
  CK(cudaGraphMemsetNodeSetParams(set_fill_clone, &ms));
  cudaGraphExecUpdateResultInfo info{};
  CK(cudaGraphExecUpdate(x, clone, &info));
  CK(cudaGraphLaunch(x, s));
  CK(cudaStreamSynchronize(s));
  // The update takes the clone's kernel arguments too (scale 3).
  check(out, 3, 0x02020202, "updated from the clone");
  EXPECT(g_host_sum == 28, "host node sum %d", g_host_sum);

  // The graph as a child of another, after an event wait on `done`.
  cudaGraph_t parent;
  CK(cudaGraphCreate(&parent, 0));
  cudaGraphNode_t wait, child;
  CK(cudaGraphAddEventWaitNode(&wait, parent, nullptr, 0, done));
  CK(cudaGraphAddChildGraphNode(&child, parent, &wait, 1, g));
  cudaGraphExec_t px;
  CK(cudaGraphInstantiate(&px, parent, 0));
  CK(cudaEventRecord(done, s));
  for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(px, s));
  CK(cudaStreamSynchronize(s));
  check(out, 3, 0x01010101, "child graph");
  EXPECT(g_host_sum == 49, "host node sum %d", g_host_sum);

  // Memory the graph allocates: filled by a kernel, copied out, freed, on
  // every launch.
  cudaMemAllocNodeParams ap{};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
  ap.bytesize = kN * sizeof(int);
  cudaGraph_t mg;
  CK(cudaGraphCreate(&mg, 0));
  cudaGraphNode_t alloc, fill_alloc, copy_out, free_alloc;
  CK(cudaGraphAddMemAllocNode(&alloc, mg, nullptr, 0, &ap));
  int* scratch = static_cast<int*>(ap.dptr);
  int seven = 7;
  void* scratch_args[] = {&scratch, &seven, &n};
  cudaKernelNodeParams fill_params = iota_params(scratch_args);
  CK(cudaGraphAddKernelNode(&fill_alloc, mg, &alloc, 1, &fill_params));
  CK(cudaGraphAddMemcpyNode1D(&copy_out, mg, &fill_alloc, 1, out, scratch, kN * sizeof(int),
                              cudaMemcpyDeviceToDevice));
  CK(cudaGraphAddMemFreeNode(&free_alloc, mg, &copy_out, 1, scratch));
  cudaGraphExec_t mx;
  CK(cudaGraphInstantiate(&mx, mg, 0));
  for (int i = 0; i < 2; ++i) CK(cudaGraphLaunch(mx, s));
  CK(cudaStreamSynchronize(s));
  check(out, 7, 0, "graph memory");
  CK(cudaGraphExecDestroy(mx));
  CK(cudaGraphDestroy(mg));

  CK(cudaGraphExecDestroy(px));
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(parent));
  CK(cudaGraphDestroy(clone));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(done));
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(fill));
  CK(cudaFree(out));
  return finish();
}
