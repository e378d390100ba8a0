// Stream capture: forwarded to the server, whose stream captures what the
// application queues on it (see client/graph/server_calls.hpp).
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/graph/server_calls.hpp"

using namespace rgpu::client;

extern "C" cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return api([&] { return stream_begin_capture(stream, mode); });
}

extern "C" cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t* dependencies,
                                                     const cudaGraphEdgeData* dependencyData, size_t numDependencies,
                                                     cudaStreamCaptureMode mode) {
  return api([&] {
    return stream_begin_capture_to_graph(stream, graph, dependencies, dependencyData, numDependencies, mode);
  });
}

extern "C" cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  return api([&] { return stream_end_capture(stream, pGraph); });
}

extern "C" cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out,
                                                unsigned long long* id_out, cudaGraph_t* graph_out,
                                                const cudaGraphNode_t** dependencies_out,
                                                const cudaGraphEdgeData** edgeData_out,
                                                size_t* numDependencies_out) {
  return api([&] {
    return stream_get_capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                                   numDependencies_out);
  });
}

extern "C" cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  return api([&] { return stream_get_capture_info(stream, status, nullptr, nullptr, nullptr, nullptr, nullptr); });
}

extern "C" cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                           const cudaGraphEdgeData* dependencyData,
                                                           size_t numDependencies, unsigned int flags) {
  return api([&] {
    return stream_update_capture_dependencies(stream, dependencies, dependencyData, numDependencies, flags);
  });
}

extern "C" cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  return api([&] { return thread_exchange_stream_capture_mode(mode); });
}
