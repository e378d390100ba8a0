#include "server/worker/graph_table.hpp"

#include <gtest/gtest.h>

using rgpu::server::GraphTable;
using rgpu::server::GraphMemoryEffect;

TEST(GraphTable, NodesBelongToTheirGraphAndGoWithIt) {
  GraphTable t;
  t.add_graph(100, 0);
  t.add_node(1, 100);
  t.add_node(2, 100);
  t.add_node(3, 999);  // an unknown graph: not added
  EXPECT_TRUE(t.node_in(1, 100));
  EXPECT_FALSE(t.node(3));
  EXPECT_EQ(t.graph_of(2), 100u);
  // A child graph belongs to its node, with nodes of its own.
  t.add_graph(200, 2);
  t.add_node(20, 200);
  EXPECT_TRUE(t.graph(200));
  EXPECT_FALSE(t.own_graph(200));
  EXPECT_TRUE(t.own_graph(100));
  t.add_exec(7, 100);
  EXPECT_EQ(t.exec_source(7), 100u);

  t.remove_graph(100);
  EXPECT_FALSE(t.graph(100));
  EXPECT_FALSE(t.node(1));
  EXPECT_FALSE(t.graph(200));
  EXPECT_FALSE(t.node(20));
  // The executable graph outlives its source, which it can no longer name.
  EXPECT_TRUE(t.exec(7));
  EXPECT_EQ(t.exec_source(7), 0u);
  EXPECT_TRUE(t.remove_exec(7));
  EXPECT_FALSE(t.remove_exec(7));
}

TEST(GraphTable, DestroyingAChildGraphNodeForgetsItsGraph) {
  GraphTable t;
  t.add_graph(100, 0);
  t.add_node(1, 100);
  t.add_graph(200, 1);
  t.add_node(20, 200);
  t.remove_node(1);
  EXPECT_FALSE(t.graph(200));
  EXPECT_FALSE(t.node(20));
  EXPECT_TRUE(t.graph(100));
}

TEST(GraphTable, OwnersChangeAndAddingKeepsTheFirst) {
  GraphTable t;
  t.add_graph(100, GraphTable::kCapturing);
  t.add_graph(100, 0);
  EXPECT_EQ(t.owner(100), GraphTable::kCapturing);
  EXPECT_FALSE(t.own_graph(100));
  t.set_owner(100, 0);
  EXPECT_TRUE(t.own_graph(100));
}

TEST(GraphTable, UserObjectsAreNamedWhileTheApplicationHoldsReferences) {
  GraphTable t;
  EXPECT_FALSE(t.user_object(5));
  t.add_user_refs(5, 2);
  EXPECT_TRUE(t.user_object(5));
  EXPECT_FALSE(t.take_user_refs(5, 3));
  EXPECT_TRUE(t.take_user_refs(5, 1));
  EXPECT_TRUE(t.user_object(5));
  EXPECT_TRUE(t.take_user_refs(5, 1));
  EXPECT_FALSE(t.user_object(5));
  EXPECT_FALSE(t.take_user_refs(5, 1));
}

TEST(GraphTable, ClearForgetsEverything) {
  GraphTable t;
  t.add_graph(100, 0);
  t.add_node(1, 100);
  t.add_exec(7, 100);
  t.add_user_refs(5, 1);
  t.clear();
  EXPECT_FALSE(t.graph(100));
  EXPECT_FALSE(t.node(1));
  EXPECT_FALSE(t.exec(7));
  EXPECT_FALSE(t.user_object(5));
}

TEST(GraphTable, AGraphsAllocationsItFreesItselfAreItsAlone) {
  GraphTable t;
  t.add_graph(100, 0);
  t.add_graph(200, 0);
  t.add_allocation(0x1000, 100);
  t.add_allocation(0x2000, 100);
  t.add_allocation(0x3000, 200);
  t.allocation_freed_in(0x1000, 100);
  t.allocation_freed_in(0x3000, 100);  // another graph's free node: the application may still free it
  EXPECT_TRUE(t.freed_by_its_graph(0x1000));
  EXPECT_FALSE(t.freed_by_its_graph(0x2000));
  EXPECT_FALSE(t.freed_by_its_graph(0x3000));
  EXPECT_FALSE(t.freed_by_its_graph(0x4000));
  EXPECT_EQ(t.self_freed_allocations(100), std::vector<uint64_t>{0x1000});
  EXPECT_TRUE(t.self_freed_allocations(200).empty());
  // They go with their graph.
  t.remove_graph(100);
  EXPECT_FALSE(t.freed_by_its_graph(0x1000));
  EXPECT_TRUE(t.self_freed_allocations(100).empty());
  t.allocation_freed_in(0x3000, 200);
  t.clear();
  EXPECT_FALSE(t.freed_by_its_graph(0x3000));
}

TEST(GraphTable, AnExecsAllocationsGoWithIt) {
  GraphTable t;
  t.add_graph(100, 0);
  t.add_exec(7, 100);
  GraphMemoryEffect effect{{{0x1000, 64}, {0x2000, 128}}, {0x5000}};
  t.set_exec_memory(7, effect);
  t.remove_graph(100);  // the executable graph outlives its graph
  EXPECT_EQ(t.exec_memory(7), effect);
  EXPECT_EQ(t.exec_memory(8), GraphMemoryEffect{});
  EXPECT_TRUE(t.remove_exec(7));
  EXPECT_EQ(t.exec_memory(7), GraphMemoryEffect{});
}

TEST(GraphTable, WhatAGraphLeavesAllocatedCountsReusedAddresses) {
  using rgpu::server::GraphMemoryNode;
  // NVIDIA's graphMemoryNodes: d_input is freed in the graph and d_negSquare
  // allocated after it at the same address, never freed in the graph.
  std::vector<GraphMemoryNode> nodes{{0x1000, 256, false}, {0x2000, 256, false}, {0x1000, 0, true},
                                     {0x1000, 256, false}, {0x2000, 0, true}, {0x3000, 64, false}};
  EXPECT_EQ(rgpu::server::memory_effect(nodes),
            (GraphMemoryEffect{{{0x1000, 256}, {0x3000, 64}}, {}}));
  // Order does not matter: the free may come first in the node list.
  std::vector<GraphMemoryNode> reordered{{0x1000, 0, true}, {0x1000, 256, false}, {0x1000, 256, false}};
  EXPECT_EQ(rgpu::server::memory_effect(reordered), (GraphMemoryEffect{{{0x1000, 256}}, {}}));
  EXPECT_EQ(rgpu::server::memory_effect(std::vector<GraphMemoryNode>{{0x1000, 8, false}, {0x1000, 0, true}}),
            GraphMemoryEffect{});
  // A graph of one free node frees another graph's allocation
  // (graphMemoryNodes' "freed in a different graph").
  EXPECT_EQ(rgpu::server::memory_effect(std::vector<GraphMemoryNode>{{0x2000, 0, true}}),
            (GraphMemoryEffect{{}, {0x2000}}));
}

TEST(GraphTable, ConditionalBodyNodesAreUnderTheGraphChildGraphNodesAreNot) {
  GraphTable t;
  t.add_graph(100, 0);
  t.add_node(1, 100);            // a conditional node
  t.add_bodies(1, {200});
  t.add_node(2, 200);            // a nested conditional node in the body
  t.add_bodies(2, {300});
  t.add_node(30, 300);
  t.add_node(3, 100);            // a child graph node
  t.add_graph(400, 3);
  t.add_node(40, 400);
  EXPECT_TRUE(t.node_under(1, 100));
  EXPECT_TRUE(t.node_under(2, 100));
  EXPECT_TRUE(t.node_under(30, 100));
  EXPECT_TRUE(t.node_under(30, 200));
  EXPECT_FALSE(t.node_under(40, 100));
  EXPECT_FALSE(t.node_under(1, 200));
  EXPECT_FALSE(t.node_under(99, 100));
}
