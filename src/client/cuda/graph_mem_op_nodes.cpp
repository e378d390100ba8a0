// Graph nodes of batch memory operations (cuGraphAddBatchMemOpNode & co.):
// the operations are checked and packed as cuStreamBatchMemOp's are, for the
// graph's device; the node's CUcontext is that device's primary context.
#include "client/cuda/cuda_api.hpp"

#include <map>
#include <mutex>
#include <vector>

#include "client/graph/node_calls.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/graph_mem_op_nodes.hpp"
#include "client/cuda/primary_context.hpp"
#include "client/cuda/stream_memops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

constexpr auto kType = static_cast<cudaGraphNodeType>(proto::kGraphNodeTypeBatchMemOp);

// The operations a get-params hands out, kept per node until its next
// get-params: CUDA's pointer stays valid as long as the node's parameters.
std::vector<CUstreamBatchMemOpParams>& kept_ops(CUgraphNode node) {
  static std::mutex mutex;
  static auto* kept = new std::map<CUgraphNode, std::vector<CUstreamBatchMemOpParams>>;
  std::lock_guard lock(mutex);
  return (*kept)[node];
}

}  // namespace

cudaError_t rgpu::client::mem_op_node(int device, const CUDA_BATCH_MEM_OP_NODE_PARAMS* np, GraphNodeParams* p) {
  if (!np || np->count == 0 || !np->paramArray) return cudaErrorInvalidValue;
  proto::Writer w;
  for (unsigned i = 0; i < np->count; ++i)
    if (cudaError_t e = put_mem_op(np->paramArray[i], device, w)) return e;
  p->type = kType;
  p->args = w.bytes();
  p->value = np->flags;
  return cudaSuccess;
}

extern "C" CUresult CUDAAPI cuGraphAddBatchMemOpNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                     const CUgraphNode* dependencies, size_t numDependencies,
                                                     const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return through_runtime([&] {
    return api([&] {
      return add_made(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
                      [&](int d, GraphNodeParams* p) { return mem_op_node(d, nodeParams, p); });
    });
  });
}

extern "C" CUresult CUDAAPI cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode,
                                                           CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams_out) {
  return through_runtime([&] {
    return api([&] {
      return get_read(hNode, kType, nodeParams_out, [&](int d, const GraphNodeParams& p) {
        auto& ops = kept_ops(hNode);
        ops.clear();
        for (const auto& w : proto::node_mem_ops(p)) ops.push_back(proto::to_cu_mem_op(w));
        *nodeParams_out = CUDA_BATCH_MEM_OP_NODE_PARAMS{primary_context(d), static_cast<unsigned>(ops.size()),
                                                        ops.data(), p.value};
        return cudaSuccess;
      });
    });
  });
}

extern "C" CUresult CUDAAPI cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode,
                                                           const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return through_runtime([&] {
    return api([&] { return set_made(hNode, [&](int d, GraphNodeParams* p) { return mem_op_node(d, nodeParams, p); }); });
  });
}

extern "C" CUresult CUDAAPI cuGraphExecBatchMemOpNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                               const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return through_runtime([&] {
    return api([&] {
      return exec_set_made(hGraphExec, hNode, [&](int d, GraphNodeParams* p) { return mem_op_node(d, nodeParams, p); });
    });
  });
}
