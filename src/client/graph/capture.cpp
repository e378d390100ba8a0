#include "client/graph/capture.hpp"

#include "client/core/api_guard.hpp"
#include "client/graph/handles.hpp"
#include "client/graph/node_calls.hpp"

namespace rgpu::client {

bool capture_of(cudaStream_t stream, Capture* capture) {
  if (!captures_may_be_active()) return false;
  cudaStreamCaptureStatus status;
  const cudaGraphNode_t* deps;
  size_t n;
  if (stream_get_capture_info(stream, &status, nullptr, &capture->graph, &deps, nullptr, &n) ||
      status != cudaStreamCaptureStatusActive)
    return false;
  capture->deps.assign(deps, deps + n);
  return true;
}

cudaError_t add_to_capture(cudaStream_t stream, const Capture& capture, const GraphNodeParams& p) {
  cudaGraphNode_t node;
  if (cudaError_t e = graph_add_node(&node, capture.graph, capture.deps.data(), capture.deps.size(), nullptr, p))
    return e;
  return stream_update_capture_dependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies);
}

bool captured_copy(cudaStream_t stream, const CopyNodeSide& dst, const CopyNodeSide& src, const CopyBox& box,
                   cudaMemcpyKind kind, cudaError_t* status) {
  Capture capture;
  if (!capture_of(stream, &capture)) return false;
  int device;
  GraphNodeParams p;
  *status = graph_device(capture.graph, &device);
  if (!*status) *status = copy_box_node(device, dst, src, box, kind, &p);
  if (!*status) *status = add_to_capture(stream, capture, p);
  return true;
}

bool captured_host_copy(cudaStream_t stream, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                        size_t height, bool to_device, cudaError_t* status) {
  return captured_copy(stream, {dst, dpitch}, {const_cast<void*>(src), spitch}, {width, height},
                       to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, status);
}

bool captured_element_memset(cudaStream_t stream, void* dst, size_t pitch, unsigned value, unsigned element_size,
                             size_t width, size_t height, cudaError_t* status) {
  // Called from the driver's entry points, outside their runtime call.
  bool captured = false;
  *status = api([&]() -> cudaError_t {
    Capture capture;
    if (!capture_of(stream, &capture)) return cudaSuccess;
    captured = true;
    GraphNodeParams p;
    if (cudaError_t e = memset_node(dst, pitch, value, element_size, width, height, &p)) return e;
    return add_to_capture(stream, capture, p);
  });
  return captured || *status;
}

}  // namespace rgpu::client
