// Graphs and stream capture, as the worker needs them from a backend. Graph,
// node and executable-graph handles are the backend's own values; the worker
// checks each one against the session's GraphTable before it gets here.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/graph_node.hpp"

namespace rgpu::server {

using GraphNodeParams = proto::GraphNodeParams;

// A host node calls this with the node's `handle` (the worker's callback
// record) when the graph gets there.
using HostNodeRunner = void (*)(uint64_t handle);

struct CaptureInfo {
  int32_t status = cudaStreamCaptureStatusNone;  // cudaStreamCaptureStatus
  uint64_t id = 0;
  uint64_t graph = 0;
  std::vector<uint64_t> dependencies;
};

class GraphBackend {
 public:
  virtual ~GraphBackend() = default;

  virtual int32_t graph_create(uint64_t* graph) = 0;
  virtual int32_t graph_destroy(uint64_t graph) = 0;
  virtual int32_t graph_clone(uint64_t* clone, uint64_t graph) = 0;
  virtual int32_t add_node(uint64_t* node, uint64_t graph, std::span<const uint64_t> deps,
                           const GraphNodeParams& p) = 0;
  virtual int32_t node_params(uint64_t node, GraphNodeParams* p) = 0;
  virtual int32_t set_node_params(uint64_t node, const GraphNodeParams& p) = 0;
  virtual int32_t node_type(uint64_t node, int32_t* type) = 0;
  virtual int32_t destroy_node(uint64_t node) = 0;
  virtual int32_t nodes(uint64_t graph, std::vector<uint64_t>* out) = 0;
  virtual int32_t root_nodes(uint64_t graph, std::vector<uint64_t>* out) = 0;
  virtual int32_t edges(uint64_t graph, std::vector<uint64_t>* from, std::vector<uint64_t>* to) = 0;
  virtual int32_t dependencies(uint64_t node, std::vector<uint64_t>* out) = 0;
  virtual int32_t dependents(uint64_t node, std::vector<uint64_t>* out) = 0;
  virtual int32_t add_dependencies(uint64_t graph, std::span<const uint64_t> from, std::span<const uint64_t> to) = 0;
  virtual int32_t remove_dependencies(uint64_t graph, std::span<const uint64_t> from,
                                      std::span<const uint64_t> to) = 0;
  virtual int32_t find_in_clone(uint64_t* out, uint64_t node, uint64_t clone) = 0;
  virtual int32_t child_graph(uint64_t node, uint64_t* graph) = 0;
  // The handle kernels set a conditional node's value through
  // (cudaGraphSetConditional); flags: 0 or cudaGraphCondAssignDefault.
  virtual int32_t conditional_handle_create(uint64_t* handle, uint64_t graph, uint32_t default_value,
                                            uint32_t flags) = 0;

  virtual int32_t instantiate(uint64_t* exec, uint64_t graph, uint64_t flags) = 0;
  virtual int32_t exec_destroy(uint64_t exec) = 0;
  virtual int32_t exec_flags(uint64_t exec, uint64_t* flags) = 0;
  virtual int32_t launch_graph(uint64_t exec, uint64_t stream) = 0;
  virtual int32_t upload(uint64_t exec, uint64_t stream) = 0;
  // result: cudaGraphExecUpdateResult; error_node: the node that failed, or 0.
  virtual int32_t exec_update(uint64_t exec, uint64_t graph, int32_t* result, uint64_t* error_node) = 0;
  virtual int32_t exec_set_params(uint64_t exec, uint64_t node, const GraphNodeParams& p) = 0;
  virtual int32_t set_enabled(uint64_t exec, uint64_t node, uint32_t enabled) = 0;
  virtual int32_t get_enabled(uint64_t exec, uint64_t node, uint32_t* enabled) = 0;
  virtual int32_t dot_print(uint64_t graph, uint32_t flags, std::string* dot) = 0;

  virtual int32_t begin_capture(uint64_t stream, int32_t mode) = 0;
  virtual int32_t begin_capture_to_graph(uint64_t stream, uint64_t graph, std::span<const uint64_t> deps,
                                         int32_t mode) = 0;
  virtual int32_t end_capture(uint64_t stream, uint64_t* graph) = 0;
  virtual int32_t capture_info(uint64_t stream, CaptureInfo* info) = 0;
  virtual int32_t update_capture_dependencies(uint64_t stream, std::span<const uint64_t> deps, uint32_t flags) = 0;
  virtual int32_t exchange_capture_mode(int32_t* mode) = 0;
  // A host function queued on a capturing stream: a host node running the
  // host-node runner with `record`.
  virtual int32_t capture_host_node(uint64_t stream, uint64_t record) = 0;

  // Kernel node launch attributes, already checked to be ones a node takes.
  virtual int32_t kernel_node_get_attribute(uint64_t node, int32_t attr, cudaLaunchAttributeValue* value) = 0;
  virtual int32_t kernel_node_set_attribute(uint64_t node, int32_t attr, const cudaLaunchAttributeValue& value) = 0;
  virtual int32_t kernel_node_copy_attributes(uint64_t dst, uint64_t src) = 0;

  // User objects: the last reference gone, the host-node runner gets
  // `record` (the destructor's callback).
  virtual int32_t user_object_create(uint64_t* object, uint64_t record, uint32_t refs, uint32_t flags) = 0;
  virtual int32_t user_object_retain(uint64_t object, uint32_t count) = 0;
  virtual int32_t user_object_release(uint64_t object, uint32_t count) = 0;
  virtual int32_t graph_retain_user_object(uint64_t graph, uint64_t object, uint32_t count, uint32_t flags) = 0;
  virtual int32_t graph_release_user_object(uint64_t graph, uint64_t object, uint32_t count) = 0;

  virtual int32_t get_graph_mem_attribute(int device, int32_t attr, uint64_t* value) = 0;
  virtual int32_t set_graph_mem_attribute(int device, int32_t attr, uint64_t value) = 0;

  // Set once by the worker before any host node is added.
  void set_host_node_runner(HostNodeRunner runner) { host_node_runner_ = runner; }

 protected:
  HostNodeRunner host_node_runner_ = nullptr;
};

}  // namespace rgpu::server
