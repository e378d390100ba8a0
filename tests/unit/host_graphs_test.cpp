// The host-test backend's graphs: replay order, capture, instantiation,
// update, enabling, user objects and checks at replay.
#include "server/backend/host/host_graphs.hpp"
#include "server/worker/exec_graph_copies.hpp"

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
  // Its memory never goes, so no launch allocates it again.
  int32_t allocate_at(uint64_t, size_t) override { return cudaErrorMemoryAllocation; }
  bool live(uint64_t ptr, size_t n) override {
    auto base = reinterpret_cast<uint64_t>(memory.data());
    return ptr >= base && ptr + n <= base + memory.size();
  }
  // Semaphore nodes reached: their type and first semaphore's value.
  int32_t run_semaphores(int32_t type, std::span<const rgpu::proto::ExternalSemaphoreOp> ops) override {
    semaphores.emplace_back(type, ops.empty() ? 0 : ops[0].value);
    return cudaSuccess;
  }
  // Page-locked host memory, while registered.
  bool host_live(uint64_t ptr, size_t n) override {
    auto base = reinterpret_cast<uint64_t>(host.data());
    return host_registered && ptr >= base && ptr + n <= base + host.size();
  }
  void host_node_running(bool running) override { host_nodes_running += running ? 1 : -1; }
  int32_t mem_ops(std::span<const StreamMemOp> ops, unsigned flags) override {
    batches.push_back({ops.begin(), ops.end()});
    return cudaSuccess;
  }
  // Array copies reached, as their nodes had them; arrays_live says whether
  // the arrays are still there.
  int32_t array_copy(const GraphNodeParams& p) override {
    array_copies.push_back(p);
    return arrays_live ? cudaSuccess : cudaErrorIllegalAddress;
  }
  std::vector<unsigned char> memory = std::vector<unsigned char>(64);
  std::vector<GraphNodeParams> array_copies;
  bool arrays_live = true;
  std::vector<std::vector<StreamMemOp>> batches;
  std::vector<std::pair<int32_t, uint64_t>> semaphores;
  std::vector<unsigned char> host = std::vector<unsigned char>(16);
  bool host_registered = true;
  int launches = 0;
  int host_nodes_running = 0;
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
  CaptureInfo info;
  ASSERT_EQ(g.capture_info(7, &info), cudaSuccess);
  EXPECT_EQ(info.status, cudaStreamCaptureStatusInvalidated);
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

TEST(HostGraphs, CopiesReachRegisteredHostMemoryWhileItIsThere) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, up, down, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  auto to_device = copy_node(at(h, 0), reinterpret_cast<uint64_t>(h.host.data()), 8);
  to_device.host_sides = rgpu::proto::kHostSrc;
  auto to_host = copy_node(reinterpret_cast<uint64_t>(h.host.data() + 8), at(h, 0), 8);
  to_host.host_sides = rgpu::proto::kHostDst;
  ASSERT_EQ(g.add_node(&up, graph, {}, to_device), cudaSuccess);
  ASSERT_EQ(g.add_node(&down, graph, std::vector<uint64_t>{up}, to_host), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  for (unsigned char v : {3, 9}) {
    std::fill(h.host.begin(), h.host.begin() + 8, v);
    ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
    EXPECT_EQ(h.memory[0], v);
    EXPECT_EQ(h.host[15], v);
  }
  // A host side is not device memory, nor the other way round.
  h.host_registered = false;
  EXPECT_EQ(g.launch_graph(exec, 0), cudaErrorIllegalAddress);
}

TEST(HostGraphs, ConditionalNodesRunTheBodiesTheirDefaultsChoose) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, h_if, h_switch, h_while, n_if, n_switch, n_while, exec, node;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  ASSERT_EQ(g.conditional_handle_create(&h_if, graph, 0, cudaGraphCondAssignDefault), cudaSuccess);
  ASSERT_EQ(g.conditional_handle_create(&h_switch, graph, 1, cudaGraphCondAssignDefault), cudaSuccess);
  ASSERT_EQ(g.conditional_handle_create(&h_while, graph, 0, 0), cudaSuccess);
  auto conditional = [](uint64_t handle, uint32_t type, uint64_t size) {
    GraphNodeParams p;
    p.type = cudaGraphNodeTypeConditional;
    p.handle = handle;
    p.value = type;
    p.width = size;
    return p;
  };
  EXPECT_EQ(g.add_node(&node, graph, {}, conditional(h_while, cudaGraphCondTypeWhile, 2)), cudaErrorInvalidValue);
  ASSERT_EQ(g.add_node(&n_if, graph, {}, conditional(h_if, cudaGraphCondTypeIf, 2)), cudaSuccess);
  ASSERT_EQ(g.add_node(&n_switch, graph, {}, conditional(h_switch, cudaGraphCondTypeSwitch, 3)), cudaSuccess);
  ASSERT_EQ(g.add_node(&n_while, graph, {}, conditional(h_while, cudaGraphCondTypeWhile, 1)), cudaSuccess);
  GraphNodeParams p_if, p_switch, p_while;
  ASSERT_EQ(g.node_params(n_if, &p_if), cudaSuccess);
  ASSERT_EQ(g.node_params(n_switch, &p_switch), cudaSuccess);
  ASSERT_EQ(g.node_params(n_while, &p_while), cudaSuccess);
  ASSERT_EQ(p_if.bodies.size(), 2u);
  ASSERT_EQ(p_switch.bodies.size(), 3u);
  ASSERT_EQ(p_while.bodies.size(), 1u);
  // IF false: the else body; SWITCH 1: body 1; WHILE false: never.
  ASSERT_EQ(g.add_node(&node, p_if.bodies[0], {}, memset_node(at(h, 0), 1, 4)), cudaSuccess);
  ASSERT_EQ(g.add_node(&node, p_if.bodies[1], {}, memset_node(at(h, 4), 2, 4)), cudaSuccess);
  for (size_t i = 0; i < 3; ++i)
    ASSERT_EQ(g.add_node(&node, p_switch.bodies[i], {}, memset_node(at(h, 8 + 4 * i), 10 + i, 4)), cudaSuccess);
  ASSERT_EQ(g.add_node(&node, p_while.bodies[0], {}, memset_node(at(h, 20), 7, 4)), cudaSuccess);
  // A body holds no event or host node.
  GraphNodeParams record;
  record.type = cudaGraphNodeTypeEventRecord;
  EXPECT_EQ(g.add_node(&node, p_switch.bodies[0], {}, record), cudaErrorInvalidValue);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  std::vector<unsigned char> expect = {0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0, 11, 11, 11, 11, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<unsigned char>(h.memory.begin(), h.memory.begin() + 24), expect);
  // A loop entered with a non-zero value could never end here: refused, not hung.
  uint64_t g2, h_loop, n_loop, exec2;
  ASSERT_EQ(g.graph_create(&g2), cudaSuccess);
  ASSERT_EQ(g.conditional_handle_create(&h_loop, g2, 1, cudaGraphCondAssignDefault), cudaSuccess);
  ASSERT_EQ(g.add_node(&n_loop, g2, {}, conditional(h_loop, cudaGraphCondTypeWhile, 1)), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec2, g2, 0), cudaSuccess);
  EXPECT_EQ(g.launch_graph(exec2, 0), cudaErrorNotSupported);
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

// A host node's function runs with the node counted as running (host_node_fence.hpp).
FakeHooks* g_hooks = nullptr;
int g_running_seen = 0;
void see_running(uint64_t) { g_running_seen = g_hooks->host_nodes_running; }

TEST(HostGraphs, HostNodesRunCountedAsRunning) {
  FakeHooks h;
  g_hooks = &h;
  g_running_seen = 0;
  HostGraphs g(h);
  g.set_host_node_runner(see_running);
  uint64_t graph, node, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  GraphNodeParams p;
  p.type = cudaGraphNodeTypeHost;
  p.handle = 7;
  ASSERT_EQ(g.add_node(&node, graph, {}, p), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(g_running_seen, 1);
  EXPECT_EQ(h.host_nodes_running, 0);
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

// Semaphore nodes run in dependency order, with their values, when added
// and when captured; an executable graph takes new values.
TEST(HostGraphs, ExternalSemaphoreNodesRunInOrder) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, wait, signal, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  GraphNodeParams s;
  s.type = cudaGraphNodeTypeExtSemaphoreSignal;
  s.semaphores = {{7, 5, 0, 0, 0}};
  GraphNodeParams w = s;
  w.type = cudaGraphNodeTypeExtSemaphoreWait;
  w.semaphores[0].value = 3;
  ASSERT_EQ(g.add_node(&wait, graph, {}, w), cudaSuccess);
  uint64_t deps[] = {wait};
  ASSERT_EQ(g.add_node(&signal, graph, deps, s), cudaSuccess);
  GraphNodeParams read;
  ASSERT_EQ(g.node_params(signal, &read), cudaSuccess);
  ASSERT_EQ(read.semaphores.size(), 1u);
  EXPECT_EQ(read.semaphores[0].value, 5u);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  std::vector<std::pair<int32_t, uint64_t>> expected = {{cudaGraphNodeTypeExtSemaphoreWait, 3},
                                                        {cudaGraphNodeTypeExtSemaphoreSignal, 5}};
  EXPECT_EQ(h.semaphores, expected);
  s.semaphores[0].value = 9;
  ASSERT_EQ(g.exec_set_params(exec, signal, s), cudaSuccess);
  h.semaphores.clear();
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  expected[1].second = 9;
  EXPECT_EQ(h.semaphores, expected);

  // Captured: a node of the capture's graph, nothing run yet.
  uint64_t stream = 77, captured;
  ASSERT_EQ(g.begin_capture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(g.record(stream, s), cudaSuccess);
  ASSERT_EQ(g.end_capture(stream, &captured), cudaSuccess);
  auto nodes = nodes_of(g, captured);
  ASSERT_EQ(nodes.size(), 1u);
  int32_t type;
  ASSERT_EQ(g.node_type(nodes[0], &type), cudaSuccess);
  EXPECT_EQ(type, cudaGraphNodeTypeExtSemaphoreSignal);
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

// A copy node with an array side replays through the backend's array copy
// once its memory side is found live; an executable graph's copy node takes
// no array operands through exec set-params, and an update keeps each side
// an array or memory, as CUDA's.
TEST(HostGraphs, ArrayCopyNodes) {
  FakeHooks h;
  HostGraphs g(h);
  uint64_t graph, node;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  GraphNodeParams copy = copy_node(0, at(h, 0), 16);
  copy.dst_array = 0x5000;
  copy.dst_at = {8, 1, 0};
  ASSERT_EQ(g.add_node(&node, graph, {}, copy), cudaSuccess);
  uint64_t exec;
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  ASSERT_EQ(h.array_copies.size(), 1u);
  EXPECT_EQ(h.array_copies[0].dst_array, 0x5000u);
  EXPECT_EQ(h.array_copies[0].dst_at, (rgpu::proto::ArrayPos{8, 1, 0}));
  // The memory side gone: nothing copied.
  GraphNodeParams gone = copy;
  gone.src = at(h, 56);
  ASSERT_EQ(g.set_node_params(node, gone), cudaSuccess);
  uint64_t exec2;
  ASSERT_EQ(g.instantiate(&exec2, graph, 0), cudaSuccess);
  EXPECT_EQ(g.launch_graph(exec2, 0), cudaErrorIllegalAddress);
  EXPECT_EQ(h.array_copies.size(), 1u);
  // An array gone.
  h.arrays_live = false;
  EXPECT_EQ(g.launch_graph(exec, 0), cudaErrorIllegalAddress);
  h.arrays_live = true;
  // No array operands in an executable graph's own parameters.
  EXPECT_EQ(g.exec_set_params(exec, node, copy), cudaErrorInvalidValue);
  EXPECT_EQ(g.exec_set_params(exec, node, copy_node(at(h, 16), at(h, 0), 16)), cudaErrorInvalidValue);
  // An update from memory to an array side fails, and so does one to another array (as on the H200).
  uint64_t plain_graph, plain_node, plain_exec;
  ASSERT_EQ(g.graph_create(&plain_graph), cudaSuccess);
  ASSERT_EQ(g.add_node(&plain_node, plain_graph, {}, copy_node(at(h, 16), at(h, 0), 16)), cudaSuccess);
  ASSERT_EQ(g.instantiate(&plain_exec, plain_graph, 0), cudaSuccess);
  int32_t result;
  uint64_t error_node;
  EXPECT_EQ(g.exec_update(plain_exec, graph, &result, &error_node), cudaErrorGraphExecUpdateFailure);
  EXPECT_EQ(result, cudaGraphExecUpdateErrorParametersChanged);
  EXPECT_EQ(error_node, node);
  const uint64_t first_array = copy.dst_array;
  copy.dst_array = 0x6000;
  ASSERT_EQ(g.set_node_params(node, copy), cudaSuccess);
  EXPECT_EQ(g.exec_update(exec, graph, &result, &error_node), cudaErrorGraphExecUpdateFailure);
  EXPECT_EQ(result, cudaGraphExecUpdateErrorParametersChanged);
  ASSERT_EQ(g.launch_graph(exec, 0), cudaSuccess);
  EXPECT_EQ(h.array_copies.back().dst_array, first_array);
}

// What a move rebuilds an executable graph from (exec_graph_copies.hpp): a
// copy of its graph that outlives the graph and follows the executable
// graph's own updates.
TEST(ExecGraphCopies, TheCopyOutlivesItsGraphAndFollowsTheExecutableGraphsUpdates) {
  FakeHooks h;
  HostGraphs g(h);
  ExecGraphCopies copies;
  uint64_t graph, set, exec;
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  ASSERT_EQ(g.add_node(&set, graph, {}, memset_node(at(h, 0), 1, 4)), cudaSuccess);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_TRUE(copies.keep(g, exec, graph, 0));
  ASSERT_EQ(g.graph_destroy(graph), cudaSuccess);

  ExecGraphCopies::Copy copy;
  ASSERT_TRUE(copies.find(exec, &copy));
  ASSERT_EQ(copy.nodes.count(set), 1u);
  const uint64_t copied = copy.nodes[set];
  copies.set_params(g, exec, set, memset_node(at(h, 0), 9, 4));
  copies.set_enabled(exec, set, 0);
  GraphNodeParams p;
  ASSERT_EQ(g.node_params(copied, &p), cudaSuccess);
  EXPECT_EQ(p.value, 9u);
  ASSERT_TRUE(copies.find(exec, &copy));
  EXPECT_EQ(copy.enabled[copied], 0u);
  EXPECT_FALSE(copy.stale);
  // Executable graphs made from their graph take the application's nodes as they are.
  EXPECT_EQ(copies.exec_node(exec, set), set);

  // An update in a node the copy does not map: it no longer runs as the executable graph does.
  copies.set_params(g, exec, 12345, memset_node(at(h, 0), 7, 4));
  ASSERT_TRUE(copies.find(exec, &copy));
  EXPECT_TRUE(copy.stale);

  // One a move built from the copy: the application's nodes stand for the copy's.
  uint64_t rebuilt_graph, rebuilt;
  ASSERT_EQ(g.graph_clone(&rebuilt_graph, copy.graph), cudaSuccess);
  ASSERT_EQ(g.instantiate(&rebuilt, rebuilt_graph, 0), cudaSuccess);
  copies.adopt(rebuilt, {rebuilt_graph, 0, {{set, copied}}, {}, true});
  EXPECT_EQ(copies.exec_node(rebuilt, set), copied);
  EXPECT_EQ(copies.exec_node(rebuilt, 777), 777u);
  copies.drop(g, exec);
  EXPECT_FALSE(copies.find(exec, &copy));
}

// XLA updates nodes of child graphs in its executable graphs: the copy maps
// those too, and follows their updates.
TEST(ExecGraphCopies, NodesOfChildGraphsAreFollowed) {
  FakeHooks h;
  HostGraphs g(h);
  ExecGraphCopies copies;
  uint64_t inner, inner_set, graph, child_node, exec;
  ASSERT_EQ(g.graph_create(&inner), cudaSuccess);
  ASSERT_EQ(g.add_node(&inner_set, inner, {}, memset_node(at(h, 0), 1, 4)), cudaSuccess);
  ASSERT_EQ(g.graph_create(&graph), cudaSuccess);
  GraphNodeParams child;
  child.type = cudaGraphNodeTypeGraph;
  child.handle = inner;
  ASSERT_EQ(g.add_node(&child_node, graph, {}, child), cudaSuccess);
  uint64_t embedded = 0;
  ASSERT_EQ(g.child_graph(child_node, &embedded), cudaSuccess);
  const std::vector<uint64_t> embedded_nodes = nodes_of(g, embedded);
  ASSERT_EQ(embedded_nodes.size(), 1u);
  ASSERT_EQ(g.instantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_TRUE(copies.keep(g, exec, graph, 0));
  ExecGraphCopies::Copy copy;
  ASSERT_TRUE(copies.find(exec, &copy));
  ASSERT_EQ(copy.nodes.count(embedded_nodes[0]), 1u);
  copies.set_params(g, exec, embedded_nodes[0], memset_node(at(h, 0), 6, 4));
  ASSERT_TRUE(copies.find(exec, &copy));
  EXPECT_FALSE(copy.stale);
  GraphNodeParams p;
  ASSERT_EQ(g.node_params(copy.nodes[embedded_nodes[0]], &p), cudaSuccess);
  EXPECT_EQ(p.value, 6u);
}
