// Graph nodes of batch memory operations on the GPU: a memset node, then a
// node writing a 32- and a 64-bit value after it; the node's parameters read
// back, changed on the executable graph only, and on the graph for a new
// instantiation.
#include <cinttypes>

#include "driver_corpus.h"

static CUstreamBatchMemOpParams write32(CUdeviceptr at, cuuint32_t v) {
  CUstreamBatchMemOpParams p{};
  p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  p.writeValue.address = at;
  p.writeValue.value = v;
  return p;
}

static void show(const char* what, CUdeviceptr d, CUstream stream) {
  CU(cuStreamSynchronize(stream));
  cuuint32_t v32[2] = {};
  cuuint64_t v64 = 0;
  CU(cuMemcpyDtoH(v32, d, sizeof v32));
  CU(cuMemcpyDtoH(&v64, d + 8, 8));
  printf("%s: %u %u 0x%016" PRIx64 "\n", what, v32[0], v32[1], static_cast<uint64_t>(v64));
}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  CUcontext ctx;
  CU(cuCtxGetCurrent(&ctx));
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr d;
  CU(cuMemAlloc(&d, 16));

  CUgraph graph;
  CU(cuGraphCreate(&graph, 0));
  CUDA_MEMSET_NODE_PARAMS ms{d, 0, 0x01010101u, 4, 4, 1};
  CUgraphNode memset_node, ops_node;
  CU(cuGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &ms, ctx));
  CUstreamBatchMemOpParams ops[2] = {write32(d, 5), {}};
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[1].writeValue.address = d + 8;
  ops[1].writeValue.value64 = 0x1122334455667788ull;
  CUDA_BATCH_MEM_OP_NODE_PARAMS np{ctx, 2, ops, 0};
  CU(cuGraphAddBatchMemOpNode(&ops_node, graph, &memset_node, 1, &np));
  CUgraphNodeType type;
  CU(cuGraphNodeGetType(ops_node, &type));
  CUDA_BATCH_MEM_OP_NODE_PARAMS got{};
  CU(cuGraphBatchMemOpNodeGetParams(ops_node, &got));
  printf("node type %d, %u operations, first writes %u\n", int(type), got.count,
         got.count ? unsigned(got.paramArray[0].writeValue.value) : 0u);

  CUgraphExec exec;
  CU(cuGraphInstantiate(&exec, graph, 0));
  CU(cuGraphLaunch(exec, stream));
  show("first launch", d, stream);

  // An executable graph's node takes new values only (the driver refuses
  // other operations or addresses there); the graph's node takes anything.
  CUstreamBatchMemOpParams nine = write32(d + 4, 9), eleven[2] = {write32(d, 11), ops[1]};
  eleven[1].writeValue.value64 = 0x99;
  CUDA_BATCH_MEM_OP_NODE_PARAMS set_nine{ctx, 1, &nine, 0}, set_eleven{ctx, 2, eleven, 0};
  CU(cuGraphBatchMemOpNodeSetParams(ops_node, &set_nine));
  CU(cuGraphExecBatchMemOpNodeSetParams(exec, ops_node, &set_eleven));
  CU(cuGraphLaunch(exec, stream));
  show("executable graph set", d, stream);
  CUgraphExec exec2;
  CU(cuGraphInstantiate(&exec2, graph, 0));
  CU(cuGraphLaunch(exec2, stream));
  show("graph set, new instantiation", d, stream);

  CU(cuGraphExecDestroy(exec));
  CU(cuGraphExecDestroy(exec2));
  CU(cuGraphDestroy(graph));
  CU(cuMemFree(d));
  CU(cuStreamDestroy(stream));
  return finish();
}
