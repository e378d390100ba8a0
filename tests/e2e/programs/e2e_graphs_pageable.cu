// Graph copy nodes on pageable host memory (malloc'd, on the stack), made
// node by node and captured from streams, in the call patterns of NVIDIA's
// simpleCudaGraphs, jacobiCudaGraphs and graphMemoryNodes. Over every
// transport each launch reads and writes the host memory as it is at that
// time (staged through shared memory over shm, device memory otherwise).
#include <cstring>
#include <vector>

#include "check.h"

namespace {

const size_t n = 3000;  // not a multiple of the staging blocks

// Rewrites v in place: graphs hold its address.
void fill(std::vector<unsigned char>& v, unsigned char seed) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(seed + i * 7);
}

std::vector<unsigned char> pattern(unsigned char seed) {
  std::vector<unsigned char> v(n);
  fill(v, seed);
  return v;
}

// A host node after the download sees the downloaded bytes (simpleCudaGraphs
// prints its result from one).
struct Seen {
  const unsigned char* at;
  size_t len = n;  // bytes at `at`
  unsigned char first = 0, last = 0;
};
void CUDART_CB look(void* p) {
  auto* s = static_cast<Seen*>(p);
  s->first = s->at[0];
  s->last = s->at[s->len - 1];
}

// Up from `in`, back down to `out`, then the host node: a graph of pageable copies.
cudaGraph_t round_trip(unsigned char* dev, const unsigned char* in, unsigned char* out, Seen* seen,
                       cudaGraphNode_t* up, cudaGraphNode_t* down) {
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaMemcpy3DParms m{};
  m.srcPtr = make_cudaPitchedPtr(const_cast<unsigned char*>(in), n, n, 1);
  m.dstPtr = make_cudaPitchedPtr(dev, n, n, 1);
  m.extent = make_cudaExtent(n, 1, 1);
  m.kind = cudaMemcpyHostToDevice;
  OK(cudaGraphAddMemcpyNode(up, g, nullptr, 0, &m));
  OK(cudaGraphAddMemcpyNode1D(down, g, up, 1, out, dev, n, cudaMemcpyDeviceToHost));
  cudaHostNodeParams h{look, seen};
  cudaGraphNode_t host;
  OK(cudaGraphAddHostNode(&host, g, down, 1, &h));
  return g;
}

void explicit_nodes(unsigned char* dev, cudaStream_t s) {
  std::vector<unsigned char> in(n), out(n), in2 = pattern(0x33), out2(n);
  Seen seen{out.data()};
  cudaGraphNode_t up, down;
  cudaGraph_t g = round_trip(dev, in.data(), out.data(), &seen, &up, &down);

  // The application sees copy nodes with its own addresses.
  cudaGraphNodeType type;
  OK(cudaGraphNodeGetType(up, &type));
  CHECK(type == cudaGraphNodeTypeMemcpy);
  cudaMemcpy3DParms got{};
  OK(cudaGraphMemcpyNodeGetParams(up, &got));
  CHECK(got.srcPtr.ptr == in.data() && got.dstPtr.ptr == dev && got.kind == cudaMemcpyHostToDevice);
  CHECK(got.extent.width == n && got.extent.height == 1);
  OK(cudaGraphMemcpyNodeGetParams(down, &got));
  CHECK(got.srcPtr.ptr == dev && got.dstPtr.ptr == out.data() && got.kind == cudaMemcpyDeviceToHost);
  size_t count = 0;
  OK(cudaGraphGetNodes(g, nullptr, &count));
  CHECK(count == 3);

  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  // A clone runs the same copies (simpleCudaGraphs launches both).
  cudaGraph_t clone;
  OK(cudaGraphClone(&clone, g));
  cudaGraphExec_t cx;
  OK(cudaGraphInstantiate(&cx, clone, 0));
  for (unsigned char v : {0x10, 0x80, 0xf1}) {
    fill(in, v);
    std::memset(out.data(), 0, n);
    seen = Seen{out.data()};
    OK(cudaGraphLaunch(v == 0x80 ? cx : x, s));
    OK(cudaStreamSynchronize(s));
    CHECK(out == in);
    CHECK(seen.first == in[0] && seen.last == in[n - 1]);
  }
  // The node cloned reads back as a copy too.
  cudaGraphNode_t cloned_up;
  OK(cudaGraphNodeFindInClone(&cloned_up, up, clone));
  OK(cudaGraphNodeGetType(cloned_up, &type));
  CHECK(type == cudaGraphNodeTypeMemcpy);

  // The graph's node moves to other buffers; the executable graph made
  // before keeps the old ones, one made after takes the new.
  OK(cudaGraphMemcpyNodeSetParams1D(up, dev, in2.data(), n, cudaMemcpyHostToDevice));
  OK(cudaGraphMemcpyNodeSetParams1D(down, out2.data(), dev, n, cudaMemcpyDeviceToHost));
  OK(cudaGraphMemcpyNodeGetParams(up, &got));
  CHECK(got.srcPtr.ptr == in2.data());
  cudaGraphExec_t after;
  OK(cudaGraphInstantiate(&after, g, 0));
  fill(in, 0x44);
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out == in);
  OK(cudaGraphLaunch(after, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out2 == in2);

  // The executable graph's own node changed (the graph's stays).
  std::vector<unsigned char> in3 = pattern(0x55);
  OK(cudaGraphExecMemcpyNodeSetParams1D(x, up, dev, in3.data(), n, cudaMemcpyHostToDevice));
  std::memset(out.data(), 0, n);
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out == in3);
  // Back to page-locked memory, still staged: a node stays what it was made.
  unsigned char* pinned;
  OK(cudaMallocHost(&pinned, n));
  std::memset(pinned, 0x66, n);
  OK(cudaGraphExecMemcpyNodeSetParams1D(x, up, dev, pinned, n, cudaMemcpyHostToDevice));
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out[0] == 0x66 && out[n - 1] == 0x66);

  // The whole executable graph updated from another graph of the same shape.
  std::vector<unsigned char> in4 = pattern(0x77), out4(n);
  Seen seen4{out4.data()};
  cudaGraphNode_t up4, down4;
  cudaGraph_t g4 = round_trip(dev, in4.data(), out4.data(), &seen4, &up4, &down4);
  cudaGraphExecUpdateResultInfo info;
  OK(cudaGraphExecUpdate(x, g4, &info));
  CHECK(info.result == cudaGraphExecUpdateSuccess);
  OK(cudaGraphDestroy(g4));  // the executable graph keeps what it took
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out4 == in4 && seen4.first == in4[0]);

  // A node made on device memory cannot become a pageable copy.
  cudaGraphNode_t d2d;
  OK(cudaGraphAddMemcpyNode1D(&d2d, g, nullptr, 0, dev + n, dev, n, cudaMemcpyDeviceToDevice));
  EXPECT_STATUS(cudaErrorNotSupported, cudaGraphMemcpyNodeSetParams1D(d2d, dev, in.data(), n, cudaMemcpyHostToDevice));
  // A range starting in page-locked memory must end there.
  cudaGraphNode_t past;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddMemcpyNode1D(&past, g, nullptr, 0, dev, pinned + 1, n,
                                                                cudaMemcpyHostToDevice));

  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphExecDestroy(cx));
  OK(cudaGraphExecDestroy(after));
  OK(cudaGraphDestroy(clone));
  OK(cudaGraphDestroy(g));
  OK(cudaFreeHost(pinned));
}

// Pitched rows: a 2-D pageable region up and down through pitched device memory.
void pitched(cudaStream_t s) {
  const size_t width = 100, height = 7, host_pitch = 130;
  unsigned char* dev;
  size_t dev_pitch;
  OK(cudaMallocPitch(reinterpret_cast<void**>(&dev), &dev_pitch, width, height));
  std::vector<unsigned char> in(host_pitch * height), out(host_pitch * height);
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaMemcpy3DParms m{};
  m.srcPtr = make_cudaPitchedPtr(in.data(), host_pitch, width, height);
  m.dstPtr = make_cudaPitchedPtr(dev, dev_pitch, width, height);
  m.extent = make_cudaExtent(width, height, 1);
  m.kind = cudaMemcpyHostToDevice;
  cudaGraphNode_t up, down;
  OK(cudaGraphAddMemcpyNode(&up, g, nullptr, 0, &m));
  m.srcPtr = make_cudaPitchedPtr(dev, dev_pitch, width, height);
  m.dstPtr = make_cudaPitchedPtr(out.data(), host_pitch, width, height);
  m.kind = cudaMemcpyDeviceToHost;
  OK(cudaGraphAddMemcpyNode(&down, g, &up, 1, &m));
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 3 + round);
    std::fill(out.begin(), out.end(), 0xee);
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    bool rows = true, gaps = true;
    for (size_t r = 0; r < height; ++r)
      for (size_t c = 0; c < host_pitch; ++c)
        if (c < width)
          rows = rows && out[r * host_pitch + c] == in[r * host_pitch + c];
        else
          gaps = gaps && out[r * host_pitch + c] == 0xee;
    CHECK(rows && gaps);
  }
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));

  // The same captured from cudaMemcpy2DAsync.
  cudaGraph_t captured;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemcpy2DAsync(dev, dev_pitch, in.data(), host_pitch, width, height, cudaMemcpyHostToDevice, s));
  OK(cudaMemcpy2DAsync(out.data(), host_pitch, dev, dev_pitch, width, height, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamEndCapture(s, &captured));
  OK(cudaGraphInstantiate(&x, captured, 0));
  in.assign(in.size(), 0x3c);
  std::fill(out.begin(), out.end(), 0);
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out[0] == 0x3c && out[(height - 1) * host_pitch + width - 1] == 0x3c && out[width] == 0);
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(captured));
  OK(cudaFree(dev));
}

// simpleCudaGraphs' capture: cudaMemcpyDefault both ways, a stack result and a host function.
void captured(unsigned char* dev, cudaStream_t s) {
  std::vector<unsigned char> in(n);
  double result = 0;  // on the stack, as the sample's
  Seen seen{reinterpret_cast<unsigned char*>(&result), sizeof result};
  cudaGraph_t g;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemcpyAsync(dev, in.data(), n, cudaMemcpyDefault, s));
  OK(cudaMemcpyAsync(&result, dev, sizeof result, cudaMemcpyDefault, s));
  OK(cudaLaunchHostFunc(s, look, &seen));
  OK(cudaStreamEndCapture(s, &g));
  size_t count = 0;
  OK(cudaGraphGetNodes(g, nullptr, &count));
  CHECK(count == 3);
  std::vector<cudaGraphNode_t> nodes(count);
  OK(cudaGraphGetNodes(g, nodes.data(), &count));
  cudaMemcpy3DParms got{};
  OK(cudaGraphMemcpyNodeGetParams(nodes[0], &got));
  CHECK(got.srcPtr.ptr == in.data() && got.dstPtr.ptr == dev && got.kind == cudaMemcpyHostToDevice);
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  for (unsigned char v : {0x21, 0x42}) {
    std::memset(in.data(), v, n);
    result = 0;
    seen = Seen{reinterpret_cast<unsigned char*>(&result), sizeof result};
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    unsigned char bytes[sizeof result];
    std::memcpy(bytes, &result, sizeof result);
    CHECK(bytes[0] == v && bytes[sizeof result - 1] == v && seen.first == v);
  }
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));
}

// jacobiCudaGraphs: each iteration captures a memset and a download into a
// stack variable, then updates one executable graph from the new graph.
void jacobi(cudaStream_t s) {
  double* d_sum;
  OK(cudaMalloc(&d_sum, sizeof(double)));
  double sum = 0;
  cudaGraphExec_t x = nullptr;
  for (int k = 0; k < 40; ++k) {
    cudaGraph_t g;
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    OK(cudaMemsetAsync(d_sum, k, sizeof(double), s));
    OK(cudaMemcpyAsync(&sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost, s));
    OK(cudaStreamEndCapture(s, &g));
    if (!x) {
      OK(cudaGraphInstantiate(&x, g, 0));
    } else {
      cudaGraphExecUpdateResultInfo info;
      OK(cudaGraphExecUpdate(x, g, &info));
      CHECK(info.result == cudaGraphExecUpdateSuccess);
    }
    OK(cudaGraphDestroy(g));
    sum = -1;
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    unsigned char bytes[sizeof sum];
    std::memcpy(bytes, &sum, sizeof sum);
    CHECK(bytes[0] == k && bytes[sizeof sum - 1] == k);
  }
  OK(cudaGraphExecDestroy(x));
  OK(cudaFree(d_sum));
}

// graphMemoryNodes: the graph allocates the device memory it copies through,
// made explicitly and captured over two streams joined by events.
void memory_nodes(cudaStream_t s) {
  std::vector<unsigned char> in = pattern(0x5b), out(n), out2(n);
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaMemAllocNodeParams a{};
  a.poolProps.allocType = cudaMemAllocationTypePinned;
  a.poolProps.location = {cudaMemLocationTypeDevice, 0};
  a.bytesize = n;
  cudaGraphNode_t alloc, up, down, free_node;
  OK(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &a));
  OK(cudaGraphAddMemcpyNode1D(&up, g, &alloc, 1, a.dptr, in.data(), n, cudaMemcpyHostToDevice));
  OK(cudaGraphAddMemcpyNode1D(&down, g, &up, 1, out.data(), a.dptr, n, cudaMemcpyDeviceToHost));
  OK(cudaGraphAddMemFreeNode(&free_node, g, &down, 1, a.dptr));
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  OK(cudaGraphDestroy(g));
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out == in);
  OK(cudaGraphExecDestroy(x));

  cudaStream_t s2;
  OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t copied, downloaded;
  OK(cudaEventCreate(&copied));
  OK(cudaEventCreate(&downloaded));
  unsigned char* d_in;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMallocAsync(reinterpret_cast<void**>(&d_in), n, s));
  OK(cudaMemcpyAsync(d_in, in.data(), n, cudaMemcpyHostToDevice, s));
  OK(cudaEventRecord(copied, s));
  OK(cudaStreamWaitEvent(s2, copied, 0));
  // On the second stream, which the capture reached through the event.
  OK(cudaMemcpyAsync(out2.data(), d_in, n, cudaMemcpyDeviceToHost, s2));
  OK(cudaEventRecord(downloaded, s2));
  OK(cudaStreamWaitEvent(s, downloaded, 0));
  OK(cudaFreeAsync(d_in, s));
  OK(cudaStreamEndCapture(s, &g));
  OK(cudaGraphInstantiate(&x, g, 0));
  OK(cudaGraphDestroy(g));
  fill(in, 0x6c);
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(out2 == in);
  OK(cudaGraphExecDestroy(x));
  OK(cudaEventDestroy(copied));
  OK(cudaEventDestroy(downloaded));
  OK(cudaStreamDestroy(s2));
}

// The application queues work behind a launch on the graph's stream while
// the host node stages: a pageable copy larger than the server's staging
// buffers (it waits for that stream before it counts as started) and an
// asynchronous download to page-locked memory (over tcp, a background copy
// waiting for that stream). The host node's own calls must wait for neither.
void queued_behind(unsigned char* dev, cudaStream_t s) {
  std::vector<unsigned char> in = pattern(0x19), out(n);
  const size_t big_n = size_t{48} << 20;
  std::vector<unsigned char> big(big_n, 0x5a);
  unsigned char *d_big, *pinned;
  OK(cudaMalloc(&d_big, big_n));
  OK(cudaMallocHost(&pinned, n));
  cudaGraph_t g;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemcpyAsync(dev, in.data(), n, cudaMemcpyHostToDevice, s));
  OK(cudaMemcpyAsync(out.data(), dev, n, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  for (unsigned char v : {0x01, 0x02}) {
    fill(in, v);
    std::memset(pinned, 0, n);
    OK(cudaGraphLaunch(x, s));
    OK(cudaMemcpyAsync(d_big, big.data(), big_n, cudaMemcpyHostToDevice, s));
    OK(cudaMemcpyAsync(pinned, dev, n, cudaMemcpyDeviceToHost, s));
    OK(cudaStreamSynchronize(s));
    CHECK(out == in && std::memcmp(pinned, in.data(), n) == 0);
  }
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));
  OK(cudaFreeHost(pinned));
  OK(cudaFree(d_big));
}

}  // namespace

int main() {
  unsigned char* dev;
  OK(cudaMalloc(&dev, 2 * n));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  explicit_nodes(dev, s);
  pitched(s);
  captured(dev, s);
  jacobi(s);
  memory_nodes(s);
  queued_behind(dev, s);
  OK(cudaStreamDestroy(s));
  OK(cudaFree(dev));
  return finish();
}
