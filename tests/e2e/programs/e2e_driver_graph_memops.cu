// Graph nodes of batch memory operations: writes of 32- and 64-bit values
// run each time the graph is launched; the node's parameters read back, set
// on the graph and on an executable graph alone; operations on memory that
// is not the application's device memory, misaligned or empty batches are
// refused.
#include <cstring>

#include "driver_check.h"

static CUstreamBatchMemOpParams write32(CUdeviceptr at, cuuint32_t v) {
  CUstreamBatchMemOpParams p{};
  p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  p.writeValue.address = at;
  p.writeValue.value = v;
  return p;
}

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, 0));
  CUdeviceptr d = 0;
  CU_OK(cuMemAlloc(&d, 16));
  CU_OK(cuMemsetD8(d, 0, 16));

  CUstreamBatchMemOpParams ops[2] = {write32(d, 5), {}};
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[1].writeValue.address = d + 8;
  ops[1].writeValue.value64 = 0x1122334455667788ull;
  CUDA_BATCH_MEM_OP_NODE_PARAMS np{ctx, 2, ops, 0};
  CUgraph graph;
  CU_OK(cuGraphCreate(&graph, 0));
  CUgraphNode node;
  CU_OK(cuGraphAddBatchMemOpNode(&node, graph, nullptr, 0, &np));
  CUgraphNodeType type;
  CU_OK(cuGraphNodeGetType(node, &type));
  CHECK(type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
  CUDA_BATCH_MEM_OP_NODE_PARAMS got{};
  CU_OK(cuGraphBatchMemOpNodeGetParams(node, &got));
  CHECK(got.count == 2 && got.ctx == ctx && got.flags == 0);
  CHECK(got.paramArray[0].writeValue.operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 &&
        got.paramArray[0].writeValue.address == d && got.paramArray[0].writeValue.value == 5);
  CHECK(got.paramArray[1].writeValue.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64 &&
        got.paramArray[1].writeValue.value64 == 0x1122334455667788ull);

  CUgraphExec exec;
  CU_OK(cuGraphInstantiate(&exec, graph, 0));
  CU_OK(cuGraphLaunch(exec, stream));
  CU_OK(cuStreamSynchronize(stream));
  cuuint32_t v32 = 0;
  cuuint64_t v64 = 0;
  CU_OK(cuMemcpyDtoH(&v32, d, 4));
  CU_OK(cuMemcpyDtoH(&v64, d + 8, 8));
  CHECK(v32 == 5 && v64 == 0x1122334455667788ull);

  // Set on the graph: later instantiations see it; set on the executable
  // graph: only it does, and only new addresses and values (as the driver).
  CUstreamBatchMemOpParams nine = write32(d, 9), eleven[2] = {write32(d, 11), ops[1]};
  eleven[1].writeValue.value64 = 0x99;
  CUDA_BATCH_MEM_OP_NODE_PARAMS set_nine{ctx, 1, &nine, 0}, set_eleven{ctx, 2, eleven, 0};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphExecBatchMemOpNodeSetParams(exec, node, &set_nine));
  CU_OK(cuGraphBatchMemOpNodeSetParams(node, &set_nine));
  CU_OK(cuGraphExecBatchMemOpNodeSetParams(exec, node, &set_eleven));
  CU_OK(cuGraphLaunch(exec, stream));
  CU_OK(cuStreamSynchronize(stream));
  CU_OK(cuMemcpyDtoH(&v32, d, 4));
  CHECK(v32 == 11);
  CUgraphExec exec2;
  CU_OK(cuGraphInstantiate(&exec2, graph, 0));
  CU_OK(cuGraphLaunch(exec2, stream));
  CU_OK(cuStreamSynchronize(stream));
  CU_OK(cuMemcpyDtoH(&v32, d, 4));
  CHECK(v32 == 9);
  CU_OK(cuGraphBatchMemOpNodeGetParams(node, &got));
  CHECK(got.count == 1 && got.paramArray[0].writeValue.value == 9);

  // Through cuGraphAddNode too.
  CUgraphNodeParams gp{};
  gp.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
  gp.memOp = CUDA_BATCH_MEM_OP_NODE_PARAMS_v2{ctx, 1, eleven, 0};
  CUgraphNode generic;
  CU_OK(cuGraphAddNode(&generic, graph, nullptr, nullptr, 0, &gp));
  CU_OK(cuGraphBatchMemOpNodeGetParams(generic, &got));
  CHECK(got.count == 1 && got.paramArray[0].writeValue.value == 11);

  // Refused: host memory, a misaligned address, no operations, no parameters.
  static cuuint32_t host_word;
  CUstreamBatchMemOpParams bad = write32(reinterpret_cast<CUdeviceptr>(&host_word), 1);
  CUDA_BATCH_MEM_OP_NODE_PARAMS bad_np{ctx, 1, &bad, 0};
  CUgraphNode other;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddBatchMemOpNode(&other, graph, nullptr, 0, &bad_np));
  bad = write32(d + 2, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddBatchMemOpNode(&other, graph, nullptr, 0, &bad_np));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphBatchMemOpNodeSetParams(node, &bad_np));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphExecBatchMemOpNodeSetParams(exec, node, &bad_np));
  CUDA_BATCH_MEM_OP_NODE_PARAMS empty{ctx, 0, ops, 0};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddBatchMemOpNode(&other, graph, nullptr, 0, &empty));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddBatchMemOpNode(&other, graph, nullptr, 0, nullptr));
  // Another kind of node has no batch parameters.
  CUDA_MEMSET_NODE_PARAMS ms{d, 0, 0, 1, 4, 1};
  CUgraphNode memset_node;
  CU_OK(cuGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &ms, ctx));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphBatchMemOpNodeGetParams(memset_node, &got));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphBatchMemOpNodeSetParams(memset_node, &set_nine));

  CU_OK(cuGraphExecDestroy(exec));
  CU_OK(cuGraphExecDestroy(exec2));
  CU_OK(cuGraphDestroy(graph));
  CU_OK(cuMemFree(d));
  CU_OK(cuStreamDestroy(stream));
  return finish();
}
