// Graphs and stream capture on the GPU: CUDA's own graphs. Kernel nodes use
// the driver API (the worker's kernels are CUfunctions), the rest the runtime.
#pragma once
#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>

#include "server/backend/graph_backend.hpp"

namespace rgpu::server {

class CudaGraphs final : public GraphBackend {
 public:
  // True when `stream` is capturing; copies from worker buffers and one-shot
  // host functions must not be captured (see capture_refused).
  static bool capturing(cudaStream_t stream);
  // Ends the stream's capture as CUDA does after an operation it cannot
  // hold; returns the error for that operation.
  static int32_t capture_refused(cudaStream_t stream);

  int32_t graph_create(uint64_t* graph) override;
  int32_t graph_destroy(uint64_t graph) override;
  int32_t graph_clone(uint64_t* clone, uint64_t graph) override;
  int32_t add_node(uint64_t* node, uint64_t graph, std::span<const uint64_t> deps,
                   const GraphNodeParams& p) override;
  int32_t node_params(uint64_t node, GraphNodeParams* p) override;
  int32_t set_node_params(uint64_t node, const GraphNodeParams& p) override;
  int32_t node_type(uint64_t node, int32_t* type) override;
  int32_t destroy_node(uint64_t node) override;
  int32_t nodes(uint64_t graph, std::vector<uint64_t>* out) override;
  int32_t root_nodes(uint64_t graph, std::vector<uint64_t>* out) override;
  int32_t edges(uint64_t graph, std::vector<uint64_t>* from, std::vector<uint64_t>* to) override;
  int32_t dependencies(uint64_t node, std::vector<uint64_t>* out) override;
  int32_t dependents(uint64_t node, std::vector<uint64_t>* out) override;
  int32_t add_dependencies(uint64_t graph, std::span<const uint64_t> from, std::span<const uint64_t> to) override;
  int32_t remove_dependencies(uint64_t graph, std::span<const uint64_t> from, std::span<const uint64_t> to) override;
  int32_t find_in_clone(uint64_t* out, uint64_t node, uint64_t clone) override;
  int32_t child_graph(uint64_t node, uint64_t* graph) override;
  int32_t conditional_handle_create(uint64_t* handle, uint64_t graph, uint32_t default_value,
                                    uint32_t flags) override;
  int32_t instantiate(uint64_t* exec, uint64_t graph, uint64_t flags) override;
  int32_t exec_destroy(uint64_t exec) override;
  int32_t exec_flags(uint64_t exec, uint64_t* flags) override;
  int32_t launch_graph(uint64_t exec, uint64_t stream) override;
  int32_t upload(uint64_t exec, uint64_t stream) override;
  int32_t exec_update(uint64_t exec, uint64_t graph, int32_t* result, uint64_t* error_node) override;
  int32_t exec_set_params(uint64_t exec, uint64_t node, const GraphNodeParams& p) override;
  int32_t set_enabled(uint64_t exec, uint64_t node, uint32_t enabled) override;
  int32_t get_enabled(uint64_t exec, uint64_t node, uint32_t* enabled) override;
  int32_t dot_print(uint64_t graph, uint32_t flags, std::string* dot) override;
  int32_t begin_capture(uint64_t stream, int32_t mode) override;
  int32_t begin_capture_to_graph(uint64_t stream, uint64_t graph, std::span<const uint64_t> deps,
                                 int32_t mode) override;
  int32_t end_capture(uint64_t stream, uint64_t* graph) override;
  int32_t capture_info(uint64_t stream, CaptureInfo* info) override;
  int32_t update_capture_dependencies(uint64_t stream, std::span<const uint64_t> deps, uint32_t flags) override;
  int32_t exchange_capture_mode(int32_t* mode) override;
  int32_t capture_host_node(uint64_t stream, uint64_t record) override;
  int32_t kernel_node_get_attribute(uint64_t node, int32_t attr, cudaLaunchAttributeValue* value) override;
  int32_t kernel_node_set_attribute(uint64_t node, int32_t attr, const cudaLaunchAttributeValue& value) override;
  int32_t kernel_node_copy_attributes(uint64_t dst, uint64_t src) override;
  int32_t user_object_create(uint64_t* object, uint64_t record, uint32_t refs, uint32_t flags) override;
  int32_t user_object_retain(uint64_t object, uint32_t count) override;
  int32_t user_object_release(uint64_t object, uint32_t count) override;
  int32_t graph_retain_user_object(uint64_t graph, uint64_t object, uint32_t count, uint32_t flags) override;
  int32_t graph_release_user_object(uint64_t graph, uint64_t object, uint32_t count) override;
  int32_t get_graph_mem_attribute(int device, int32_t attr, uint64_t* value) override;
  int32_t set_graph_mem_attribute(int device, int32_t attr, uint64_t value) override;

 private:
  // Conditional nodes as they were made: CUDA hands out their body graphs
  // only then, and has no call reading a conditional node's parameters.
  std::mutex conditionals_mutex_;
  std::unordered_map<uint64_t, GraphNodeParams> conditionals_;
};

}  // namespace rgpu::server
