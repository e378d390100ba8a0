// Conditional graph nodes: IF (with and without an else body), SWITCH and
// WHILE nodes whose bodies CUDA makes, filled node by node and by capture,
// run by their handles' default values (the test backend runs no kernel, so
// no kernel sets a condition here; tests/gpu/corpus has those), launched
// twice; bodies' limits and bad parameters refused.
#include <cstring>
#include <vector>

#include "check.h"

__global__ void set_condition(cudaGraphConditionalHandle handle, unsigned value) {
  cudaGraphSetConditional(handle, value);
}

static cudaGraphNode_t add_conditional(cudaGraph_t g, cudaGraphConditionalHandle h, cudaGraphConditionalNodeType type,
                                       unsigned size, cudaGraph_t** bodies, const cudaGraphNode_t* dep = nullptr) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h;
  p.conditional.type = type;
  p.conditional.size = size;
  cudaGraphNode_t node = nullptr;
  OK(cudaGraphAddNode(&node, g, dep, nullptr, dep ? 1 : 0, &p));
  *bodies = p.conditional.phGraph_out;
  return node;
}

static void add_memset(cudaGraph_t g, void* dst, unsigned char value, size_t n) {
  cudaMemsetParams m = byte_memset(dst, value, n);
  cudaGraphNode_t node;
  OK(cudaGraphAddMemsetNode(&node, g, nullptr, 0, &m));
}

static bool bytes_are(const unsigned char* d, size_t n, unsigned char x) { return all(read_back(d, n), x); }

int main() {
  const size_t n = 4096;
  unsigned char* mem;
  OK(cudaMalloc(&mem, 8 * n));
  unsigned char *if_only = mem, *if_else = mem + n, *sw = mem + 2 * n, *loop = mem + 5 * n, *captured = mem + 6 * n;
  cudaStream_t s;
  OK(cudaStreamCreate(&s));

  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  // Each launch assigns the defaults: IF true, IF/ELSE false, SWITCH 2, WHILE false.
  cudaGraphConditionalHandle h_if, h_else, h_switch, h_while;
  OK(cudaGraphConditionalHandleCreate(&h_if, g, 1, cudaGraphCondAssignDefault));
  OK(cudaGraphConditionalHandleCreate(&h_else, g, 0, cudaGraphCondAssignDefault));
  OK(cudaGraphConditionalHandleCreate(&h_switch, g, 2, cudaGraphCondAssignDefault));
  OK(cudaGraphConditionalHandleCreate(&h_while, g, 0, cudaGraphCondAssignDefault));

  cudaGraph_t* bodies;
  cudaGraphNode_t if_node = add_conditional(g, h_if, cudaGraphCondTypeIf, 1, &bodies);
  CHECK(bodies && bodies[0]);
  cudaGraph_t if_body = bodies[0];
  add_memset(if_body, if_only, 0x11, n);
  // A copy in a body, which the executable graph updates (as XLA's loops do).
  unsigned char* source;
  OK(cudaMalloc(&source, 2 * n));
  OK(cudaMemset(source, 0x99, n));
  OK(cudaMemset(source + n, 0xAA, n));
  unsigned char* copied = mem + 7 * n;
  cudaGraphNode_t body_copy;
  OK(cudaGraphAddMemcpyNode1D(&body_copy, if_body, nullptr, 0, copied, source, n, cudaMemcpyDeviceToDevice));
  // A kernel that sets a condition is what bodies usually hold.
  cudaGraphNode_t kernel;
  cudaGraphNodeParams kp{};
  kp.type = cudaGraphNodeTypeKernel;
  unsigned zero = 0;
  void* args[] = {&h_if, &zero};
  kp.kernel.func = reinterpret_cast<void*>(set_condition);
  kp.kernel.gridDim = dim3(1);
  kp.kernel.blockDim = dim3(1);
  kp.kernel.kernelParams = args;
  OK(cudaGraphAddNode(&kernel, if_body, nullptr, nullptr, 0, &kp));
  // A body may also be filled by capture.
  OK(cudaStreamBeginCaptureToGraph(s, if_body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(captured, 0x77, n, s));
  cudaGraph_t capture_graph = nullptr;
  OK(cudaStreamEndCapture(s, &capture_graph));
  CHECK(capture_graph == if_body);
  size_t count = 0;
  OK(cudaGraphGetNodes(if_body, nullptr, &count));
  CHECK(count == 4);
  // As NVIDIA's graphConditionalNodes sample does: a body filled by capture, ended with no output.
  OK(cudaStreamBeginCaptureToGraph(s, if_body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(captured, 0x77, n, s));
  OK(cudaStreamEndCapture(s, nullptr));
  OK(cudaGraphGetNodes(if_body, nullptr, &count));
  CHECK(count == 5);

  add_conditional(g, h_else, cudaGraphCondTypeIf, 2, &bodies, &if_node);
  add_memset(bodies[0], if_else, 0x22, n);
  add_memset(bodies[1], if_else, 0x33, n);
  cudaGraph_t else_body = bodies[1];

  add_conditional(g, h_switch, cudaGraphCondTypeSwitch, 3, &bodies);
  for (int i = 0; i < 3; ++i) add_memset(bodies[i], sw + i * n, static_cast<unsigned char>(0x40 + i), n);

  cudaGraph_t* while_bodies;
  cudaGraphNode_t while_node = add_conditional(g, h_while, cudaGraphCondTypeWhile, 1, &while_bodies);
  add_memset(while_bodies[0], loop, 0x55, n);
  cudaGraphNodeType type;
  OK(cudaGraphNodeGetType(while_node, &type));
  CHECK(type == cudaGraphNodeTypeConditional);

  // What a body cannot hold, and what a conditional node cannot be.
  cudaGraphNode_t bad;
  cudaGraphNodeParams ev{};
  ev.type = cudaGraphNodeTypeEventRecord;
  cudaEvent_t event;
  OK(cudaEventCreate(&event));
  ev.eventRecord.event = event;
  CHECK(cudaGraphAddNode(&bad, else_body, nullptr, nullptr, 0, &ev) != cudaSuccess);
  cudaGraphNodeParams c{};
  c.type = cudaGraphNodeTypeConditional;
  c.conditional.handle = h_while;
  c.conditional.type = cudaGraphCondTypeWhile;
  c.conditional.size = 2;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddNode(&bad, g, nullptr, nullptr, 0, &c));
  c.conditional.type = cudaGraphCondTypeSwitch;
  c.conditional.size = 0;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddNode(&bad, g, nullptr, nullptr, 0, &c));
  c.conditional.size = 1;
  c.conditional.handle = 12345;  // no handle of this session
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddNode(&bad, g, nullptr, nullptr, 0, &c));
  cudaGraphConditionalHandle h_bad;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphConditionalHandleCreate(&h_bad, g, 0, 0x80));
  // The bodies are CUDA's: the application does not destroy them.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphDestroy(else_body));

  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  for (int launch = 0; launch < 2; ++launch) {
    OK(cudaMemsetAsync(mem, 0, 8 * n, s));
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    CHECK(bytes_are(if_only, n, 0x11));
    CHECK(bytes_are(captured, n, 0x77));
    CHECK(bytes_are(if_else, n, 0x33));
    CHECK(bytes_are(sw, n, 0));
    CHECK(bytes_are(sw + n, n, 0));
    CHECK(bytes_are(sw + 2 * n, n, 0x42));
    CHECK(bytes_are(loop, n, 0));
    CHECK(bytes_are(copied, n, 0x99));
  }
  OK(cudaGraphExecMemcpyNodeSetParams1D(x, body_copy, copied, source + n, n, cudaMemcpyDeviceToDevice));
  OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  CHECK(bytes_are(copied, n, 0xAA));
  // The node's graph keeps its own parameters.
  cudaMemcpy3DParms kept{};
  OK(cudaGraphMemcpyNodeGetParams(body_copy, &kept));
  CHECK(kept.srcPtr.ptr == source);

  // A clone keeps its conditional nodes and their bodies.
  cudaGraph_t clone;
  OK(cudaGraphClone(&clone, g));
  cudaGraphExec_t cx;
  OK(cudaGraphInstantiate(&cx, clone, 0));
  OK(cudaMemsetAsync(mem, 0, 8 * n, s));
  OK(cudaGraphLaunch(cx, s));
  OK(cudaStreamSynchronize(s));
  CHECK(bytes_are(if_only, n, 0x11));
  CHECK(bytes_are(if_else, n, 0x33));
  CHECK(bytes_are(sw + 2 * n, n, 0x42));

  // Destroying the node takes its bodies with it.
  OK(cudaGraphDestroyNode(while_node));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphGetNodes(while_bodies[0], nullptr, &count));

  OK(cudaGraphExecDestroy(cx));
  OK(cudaGraphDestroy(clone));
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));
  // The handles went with their graph.
  cudaGraph_t g2;
  OK(cudaGraphCreate(&g2, 0));
  c.conditional.handle = h_if;
  c.conditional.type = cudaGraphCondTypeIf;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGraphAddNode(&bad, g2, nullptr, nullptr, 0, &c));
  OK(cudaGraphDestroy(g2));
  OK(cudaEventDestroy(event));
  OK(cudaStreamDestroy(s));
  OK(cudaFree(source));
  OK(cudaFree(mem));
  return finish();
}
