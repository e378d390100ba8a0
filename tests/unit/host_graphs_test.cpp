// The host-test backend's graphs: replay order, capture, instantiation,
// update, enabling, user objects and checks at replay.
#include "server/backend/host/host_graphs.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace rgpu::server;

namespace {

class FakeHooks : public HostGraphHooks {
 public:
  int32_t check_launch(uint64_t, const LaunchConfig&) override {
    ++launches;
    return cudaSuccess;
  }
  void record_event(uint64_t event) override { recorded.push_back(event); }
  // Graph allocations come from the last 16 bytes.
  int32_t allocate(uint64_t* ptr, size_t size) override {
    if (size > 16) return cudaErrorMemoryAllocation;
    *ptr = reinterpret_cast<uint64_t>(memory.data() + 48);
    return cudaSuccess;
  }
  bool live(uint64_t ptr, size_t n) override {
    auto base = reinterpret_cast<uint64_t>(memory.data());
    return ptr >= base && ptr + n <= base + memory.size();
  }
  int32_t mem_ops(std::span<const StreamMemOp> ops, unsigned flags) override {
    batches.push_back({ops.begin(), ops.end()});
    return cudaSuccess;
  }
  std::vector<unsigned char> memory = std::vector<unsigned char>(64);
  std::vector<std::vector<StreamMemOp>> batches;
  int launches = 0;
  std::vector<uint64_t> recorded;
};

uint64_t at(FakeHooks& h, size_t offset) { return reinterpret_cast<uint64_t>(h.memory.data() + offset); }

GraphNodeParams memset_node(uint64_t dst, unsigned char value, size_t n) {
  GraphNodeParams p;
  p.type = cudaGraphNodeTypeMemset;
  p.dst = dst;
  p.value = value;
  p.element_size = 1;
  p.width = p.dst_pitch = n;
  p.height = 1;
  return p;
}

GraphNodeParams copy_node(uint64_t dst, uint64_t src, size_t n) {
  GraphNodeParams p;
  p.type = cudaGraphNodeTypeMemcpy;
  p.dst = dst;
  p.src = src;
  p.width = p.dst_pitch = p.src_pitch = n;
  p.height = 1;
  return p;
}

std::vector<uint64_t> nodes_of(HostGraphs& g, uint64_t graph) {
  std::vector<uint64_t> out;
  EXPECT_EQ(g.nodes(graph, &out), cudaSuccess);
  return out;
}

int g_destroyed = 0;
void count_destroyed(uint64_t) { ++g_destroyed; }

}  // namespace

TEST(HostGraphs, ReplayFollowsDependenciesNotInsertionOrder) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, second_set, copy, first_set;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  // Added last-first; the dependencies say first set, then copy, then second set.
  ASSERT_EQ(g.add_node(&second_set, graph, {}, memset_node(at(h, 0), 2, 8)), cudaSuccess);
  ASSERT_EQ(g.add_node(&copy, graph, {}, copy_node(at(h, 8), at(h, 0), 8)), cudaSuccess);
  ASSERT_EQ(g.add_node(&first_set, graph, {}, memset_node(at(h, 0), 1, 8)), cudaSuccess);
  uint64_t from[] = {first_set, copy}, to[] = {copy, second_set};
  ASSERT_EQ(g.add_dependencies(graph, from, to), cudaSuccess);
  uint64_t exec;
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(h.memory[0], 2);
  EXPECT_EQ(h.memory[8], 1);
  // A cycle cannot be instantiated.
  uint64_t back_from[] = {second_set}, back_to[] = {first_set};
  ASSERT_EQ(g.add_dependencies(graph, back_from, back_to), cudaSuccess);
  uint64_t cyclic;
  EXPECT_EQ(g.instantiate(&cyclic, graph, 0), cudaErrorInvalidValue);
}

TEST(HostGraphs, CaptureRecordsInStreamOrderAndForks) {
  FakeHooks h;
  HostGraphs g(h);
  const uint64_t s1 = 0x100, s2 = 0x200, event = 0x300;
  EXPECT_EQ(g.begin_capture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
  ASSERT_EQ(g.begin_capture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_TRUE(g.capturing(s1));
  ASSERT_EQ(g.record(s1, memset_node(at(h, 0), 5, 4)), cudaSuccess);
  EXPECT_TRUE(g.capture_event_record(event, s1));
  int32_t e;
  EXPECT_TRUE(g.capture_event_wait(s2, event, 0, &e));
  EXPECT_EQ(e, cudaSuccess);
  EXPECT_TRUE(g.capturing(s2));
  ASSERT_EQ(g.record(s2, copy_node(at(h, 16), at(h, 0), 4)), cudaSuccess);
  ASSERT_EQ(g.record(s1, memset_node(at(h, 32), 6, 4)), cudaSuccess);
  // Nothing ran.
  EXPECT_EQ(h.memory[0], 0);
  uint64_t graph;
  EXPECT_EQ(g.end_capture(s2, &graph), cudaErrorStreamCaptureUnmatched);
  ASSERT_EQ(g.end_capture(s1, &graph), cudaSuccess);
  EXPECT_FALSE(g.capturing(s2));
  EXPECT_EQ(nodes_of(g, graph).size(), 3u);
  std::vector<uint64_t> roots, from, to;
  ASSERT_EQ(g.root_nodes(graph, &roots), cudaSuccess);
  ASSERT_EQ(g.edges(graph, &from, &to), cudaSuccess);
  EXPECT_EQ(roots.size(), 1u);
  EXPECT_EQ(from.size(), 2u);  // both later nodes follow the first memset only
  uint64_t exec;
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(h.memory[16], 5);
  EXPECT_EQ(h.memory[32], 6);
}

TEST(HostGraphs, RefusedWorkInvalidatesTheCapture) {
  FakeHooks h;
  HostGraphs g(h);
  ASSERT_EQ(g.begin_capture(7, cudaStreamCaptureModeRelaxed), cudaSuccess);
  EXPECT_EQ(g.refuse(7), cudaErrorStreamCaptureUnsupported);
  cudaStreamCaptureStatus status;
  ASSERT_EQ(g.is_capturing(7, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
  EXPECT_EQ(g.record(7, memset_node(at(h, 0), 1, 1)), cudaErrorStreamCaptureInvalidated);
  uint64_t graph = 1;
  EXPECT_EQ(g.end_capture(7, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, 0u);
  EXPECT_FALSE(g.capturing(7));
}

TEST(HostGraphs, UpdateAndSetParamsReachOnlyTheExecutableGraph) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, set, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  ASSERT_EQ(g.add_node(&set, graph, {}, memset_node(at(h, 0), 1, 4)), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.exec_set_params(exec, set, memset_node(at(h, 0), 9, 4)), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(h.memory[0], 9);
  GraphNodeParams p;
  ASSERT_EQ(g.node_params(set, &p), cudaSuccess);
  EXPECT_EQ(p.value, 1u);
  EXPECT_EQ(g.exec_set_params(exec, set, copy_node(at(h, 0), at(h, 4), 4)), cudaErrorInvalidValue);

  // Disabled nodes are skipped.
  ASSERT_EQ(g.set_enabled(exec, set, 0), cudaSuccess);
  h.memory[0] = 0;
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(h.memory[0], 0);
  ASSERT_EQ(g.set_enabled(exec, set, 1), cudaSuccess);

  // Update from a graph of the same shape; not from one of another.
  uint64_t other, other_set;
  ASSERT_EQ(g.graph_create(&other), cudaSuccess);
  ASSERT_EQ(g.add_node(&other_set, other, {}, memset_node(at(h, 0), 4, 4)), cudaSuccess);
  int32_t result;
  uint64_t error_node;
  ASSERT_EQ(g.exec_update(exec, other, &result, &error_node), cudaSuccess);
  EXPECT_EQ(result, cudaGraphExecUpdateSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(h.memory[0], 4);
  uint64_t extra;
  ASSERT_EQ(g.add_node(&extra, other, {}, GraphNodeParams{}), cudaSuccess);
  EXPECT_EQ(g.exec_update(exec, other, &result, &error_node), cudaErrorGraphExecUpdateFailure);
  EXPECT_EQ(result, cudaGraphExecUpdateErrorTopologyChanged);
}

TEST(HostGraphs, ReplayChecksMemoryIsStillThere) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, copy, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  ASSERT_EQ(g.add_node(&copy, graph, {}, copy_node(at(h, 0), at(h, 60), 8)), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  EXPECT_EQ(g.launch_graph(exec, 0), cudaErrorIllegalAddress);
}

TEST(HostGraphs, UserObjectsGoWithTheirLastReference) {
  FakeHooks h;
  HostGraphs g(h);
  g.set_host_node_runner(count_destroyed);
  g_destroyed = 0;
  uint64_t object, graph, exec;
  ASSERT_EQ(g.user_object_create(&object, 42, 1, cudaUserObjectNoDestructorSync), cudaSuccess);
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  ASSERT_EQ(g.graph_retain_user_object(graph, object, 1, cudaGraphUserObjectMove), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.graph_destroy(graph), cudaSuccess);
  EXPECT_EQ(g_destroyed, 0);  // the executable graph holds its own reference
  ASSERT_EQ(g.exec_destroy(exec), cudaSuccess);
  EXPECT_EQ(g_destroyed, 1);
}

TEST(HostGraphs, AllocationNodesHandOutMemoryWhenMade) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, alloc, set, free_node, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  GraphNodeParams a;
  a.type = cudaGraphNodeTypeMemAlloc;
  a.width = 16;
  ASSERT_EQ(g.add_node(&alloc, graph, {}, a), cudaSuccess);
  GraphNodeParams made;
  ASSERT_EQ(g.node_params(alloc, &made), cudaSuccess);
  EXPECT_EQ(made.dst, at(h, 48));
  uint64_t after_alloc[] = {alloc};
  ASSERT_EQ(g.add_node(&set, graph, after_alloc, memset_node(made.dst, 7, 16)), cudaSuccess);
  GraphNodeParams f;
  f.type = cudaGraphNodeTypeMemFree;
  f.dst = made.dst;
  uint64_t after_set[] = {set};
  ASSERT_EQ(g.add_node(&free_node, graph, after_set, f), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(h.memory[63], 7);
  // Memory nodes keep their parameters.
  EXPECT_EQ(g.set_node_params(alloc, a), cudaErrorInvalidValue);
  EXPECT_EQ(g.exec_set_params(exec, free_node, f), cudaErrorInvalidValue);
}

TEST(HostGraphs, NoDestructorRunsOnceTheSessionIsOver) {
  FakeHooks h;
  g_destroyed = 0;
  {
    HostGraphs g(h);
    g.set_host_node_runner(count_destroyed);
    uint64_t object, graph;
    ASSERT_EQ(g.user_object_create(&object, 42, 1, cudaUserObjectNoDestructorSync), cudaSuccess);
    ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
    ASSERT_EQ(g.graph_retain_user_object(graph, object, 1, cudaGraphUserObjectMove), cudaSuccess);
  }
  EXPECT_EQ(g_destroyed, 0);
}

// A batch memory-operation node hands its operations to the backend's stream
// memory operations each time it runs, after checking their memory is there.
TEST(HostGraphs, BatchMemOpNodesRunTheirOperations) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, node, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  GraphNodeParams p;
  p.type = rgpu::proto::kGraphNodeTypeBatchMemOp;
  rgpu::proto::MemOpWire ops[2] = {{CU_STREAM_MEM_OP_WRITE_VALUE_32, 0, at(h, 8), 7},
                             {CU_STREAM_MEM_OP_BARRIER, 0, 0, 0}};
  p.args.assign(reinterpret_cast<uint8_t*>(ops), reinterpret_cast<uint8_t*>(ops) + sizeof ops);
  ASSERT_EQ(g.add_node(&node, graph, {}, p), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  ASSERT_EQ(h.batches.size(), 1u);
  ASSERT_EQ(h.batches[0].size(), 2u);
  EXPECT_EQ(h.batches[0][0].type, CU_STREAM_MEM_OP_WRITE_VALUE_32);
  EXPECT_EQ(h.batches[0][0].address, at(h, 8));
  EXPECT_EQ(h.batches[0][0].value, 7u);
  EXPECT_EQ(h.batches[0][1].type, CU_STREAM_MEM_OP_BARRIER);
  GraphNodeParams got;
  ASSERT_EQ(g.node_params(node, &got), cudaSuccess);
  EXPECT_EQ(got.args, p.args);
  // An operation on memory that is gone fails the launch.
  ops[0].address = at(h, 62);
  p.args.assign(reinterpret_cast<uint8_t*>(ops), reinterpret_cast<uint8_t*>(ops) + sizeof ops);
  ASSERT_EQ(g.exec_set_params(exec, node, p), cudaSuccess);
  EXPECT_EQ(g.launch_graph(exec, 0), cudaErrorIllegalAddress);
}
