// TEST BACKEND: graphs and stream capture for host-test. A graph is a list of
// nodes with their dependencies; work queued on a capturing stream becomes
// nodes instead of running; launching an executable graph runs its nodes in
// dependency order (copies and memsets for real, kernels validated only, as
// host-test does for launches). A memory allocation node's memory is
// allocated when the node is made and stays until the application frees it;
// a launch after such a free allocates it again at its address, as CUDA's.
// Conditional nodes run their bodies by their handle's value; since kernels
// do not run here, that value is the default each launch assigns (a WHILE
// entered with a non-zero value could never end: it fails instead).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "server/backend/backend.hpp"

namespace rgpu::server {

// What replaying a graph needs from the rest of host-test.
class HostGraphHooks {
 public:
  virtual ~HostGraphHooks() = default;
  virtual int32_t check_launch(uint64_t function, const LaunchConfig& c) = 0;
  virtual void record_event(uint64_t event) = 0;
  // True when [ptr, ptr + n) is inside live device memory.
  virtual bool live(uint64_t ptr, size_t n) = 0;
  // True when [ptr, ptr + n) is inside registered (page-locked) host memory.
  virtual bool host_live(uint64_t ptr, size_t n) = 0;
  // A copy node with a CUDA array side (its memory side found live);
  // cudaErrorIllegalAddress when an array is gone.
  virtual int32_t array_copy(const GraphNodeParams& p) = 0;
  // Device memory for a graph's allocation node, on the current device.
  virtual int32_t allocate(uint64_t* ptr, size_t size) = 0;
  // The same memory again at ptr, where the application freed it outside
  // its graph: the graph's next launch allocates it at its address.
  virtual int32_t allocate_at(uint64_t ptr, size_t size) = 0;
  // An external semaphore signal or wait node (`type`) reached. A wait
  // holds the graph, and the session's graph calls with it, until ready.
  virtual int32_t run_semaphores(int32_t type, std::span<const proto::ExternalSemaphoreOp> ops) = 0;
  // A batch memory-operation node's operations, as cuStreamBatchMemOp's.
  virtual int32_t mem_ops(std::span<const StreamMemOp> ops, unsigned flags) = 0;
  // A host node starts or stops running on the current device (host_node_fence.hpp).
  virtual void host_node_running(bool running) = 0;
};

struct HostGraph;

// A conditional node's handle: the value kernels would set, and the default
// a launch assigns when asked to.
struct HostConditional {
  uint32_t value;
  uint32_t default_value;
  bool assign_default;
};

struct HostNode {
  GraphNodeParams p;
  HostGraph* graph = nullptr;
  std::vector<HostNode*> deps;
  std::unique_ptr<HostGraph> child;  // a child graph node's own copy
  std::vector<std::unique_ptr<HostGraph>> bodies;  // a conditional node's body graphs
  const HostNode* origin = nullptr;  // the node this one was cloned from
  bool enabled = true;
  std::map<int32_t, cudaLaunchAttributeValue> attributes;  // a kernel node's, as set
};

struct HostUserObject {
  uint64_t record;  // the destructor's callback
  uint64_t refs;
  HostNodeRunner runner;
};
// Drops n references; the last one runs the destructor and frees the object.
void release_user_object(HostUserObject* o, uint64_t n);

struct HostGraph {
  HostGraph() = default;
  HostGraph(const HostGraph&) = delete;
  HostGraph& operator=(const HostGraph&) = delete;
  ~HostGraph() {
    for (auto& [o, n] : user_refs) release_user_object(o, n);
  }
  std::vector<std::unique_ptr<HostNode>> nodes;
  std::map<HostUserObject*, uint64_t> user_refs;  // the references this graph holds
  // The conditional handles made for this graph (shared with its clones).
  std::vector<std::shared_ptr<HostConditional>> conditionals;
  bool body = false;  // a conditional node's body: only some node types may be in it
};

class HostGraphs final : public GraphBackend {
 public:
  explicit HostGraphs(HostGraphHooks& hooks) : hooks_(hooks) {}
  ~HostGraphs() override;

  // Stream capture as the rest of host-test sees it.
  bool capturing(uint64_t stream);
  // Adds p to the stream's capture.
  int32_t record(uint64_t stream, const GraphNodeParams& p);
  // An operation the capture cannot hold: the capture is invalidated.
  int32_t refuse(uint64_t stream);
  // True when the record or wait was part of a capture (and is done).
  bool capture_event_record(uint64_t event, uint64_t stream);
  bool capture_event_wait(uint64_t stream, uint64_t event, unsigned flags, int32_t* error);

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
  struct Capture {
    HostGraph* graph;
    uint64_t id;
    uint64_t origin;  // the stream that began it
    bool owns_graph;  // made by the capture (else the application's, kept on failure)
    bool invalidated = false;
    bool ended = false;
  };
  struct StreamCapture {
    std::shared_ptr<Capture> capture;
    std::vector<HostNode*> deps;
  };
  struct Exec {
    std::unique_ptr<HostGraph> graph;
    uint64_t flags;
  };

  int32_t start(uint64_t stream, HostGraph* graph, std::span<const uint64_t> deps, int32_t mode, bool owns);
  int32_t add(HostNode** out, HostGraph& g, std::vector<HostNode*> deps, const GraphNodeParams& p);
  int32_t run(const HostGraph& g, uint64_t stream);
  int32_t run_node(const HostNode& n, uint64_t stream);
  int32_t run_conditional(const HostNode& n, uint64_t stream);
  HostNode* copy_in(HostGraph& exec_graph, uint64_t node);

  HostGraphHooks& hooks_;
  std::recursive_mutex mutex_;
  std::unordered_map<HostGraph*, std::unique_ptr<HostGraph>> graphs_;  // top-level graphs
  std::unordered_map<Exec*, std::unique_ptr<Exec>> execs_;
  std::unordered_map<uint64_t, StreamCapture> captures_;  // by stream
  std::unordered_map<uint64_t, StreamCapture> event_captures_;  // by event
  uint64_t next_capture_id_ = 1;
};

}  // namespace rgpu::server
