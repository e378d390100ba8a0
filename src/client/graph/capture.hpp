// Work a capturing stream gets from this process rather than from the
// server: nodes added to its capture graph as the stream's next work
// (copies of host memory the server does not map, memsets whose pattern
// lives here).
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "client/graph/node_params.hpp"
#include "protocol/graph_node.hpp"

namespace rgpu::client {

using proto::GraphNodeParams;

// A stream's capture while it is active: the graph and what the next node
// captured depends on. False at once while no capture was begun here.
struct Capture {
  cudaGraph_t graph = nullptr;
  std::vector<cudaGraphNode_t> deps;
};
bool capture_of(cudaStream_t stream, Capture* capture);
// Adds a node to the capture, as the stream's next work.
cudaError_t add_to_capture(cudaStream_t stream, const Capture& capture, const GraphNodeParams& p);

// A copy queued on `stream` that this process makes a graph node of while
// the stream captures (host memory the server does not map, CUDA arrays):
// when the stream is capturing it becomes a copy node of the capture (a
// staged copy node for pageable memory), and true is returned with the
// call's result in *status. False: not capturing.
bool captured_copy(cudaStream_t stream, const CopyNodeSide& dst, const CopyNodeSide& src, const CopyBox& box,
                   cudaMemcpyKind kind, cudaError_t* status);
// The same for a pitched copy between device and host memory.
bool captured_host_copy(cudaStream_t stream, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                        size_t height, bool to_device, cudaError_t* status);

// A 16- or 32-bit memset (the driver's D16/D32) queued on `stream`, which
// outside a capture copies a pattern from this process's memory: when the
// stream is capturing it becomes a memset node of that element size instead
// (the pattern would be gone when the graph runs), and true is returned with
// the call's result in *status (also true for an error finding the capture).
bool captured_element_memset(cudaStream_t stream, void* dst, size_t pitch, unsigned value, unsigned element_size,
                             size_t width, size_t height, cudaError_t* status);

}  // namespace rgpu::client
