// Stream capture (driver API) over the runtime's paths, legacy bindings too.
#include "client/cuda/cuda_api.hpp"

#include "client/graph/server_calls.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

template <typename F>
CUresult driver(F&& f) {
  return through_runtime([&] { return api(f); });
}

cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }
cudaStreamCaptureMode rt(CUstreamCaptureMode m) { return static_cast<cudaStreamCaptureMode>(m); }

}  // namespace

// The binding from before capture modes: a global-mode capture.
extern "C" CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream) {
  return driver([&] { return stream_begin_capture(rt(hStream), cudaStreamCaptureModeGlobal); });
}

extern "C" CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  return driver([&] { return stream_begin_capture(rt(hStream), rt(mode)); });
}

extern "C" CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                                        const CUgraphNode* dependencies,
                                                        const CUgraphEdgeData* dependencyData,
                                                        size_t numDependencies, CUstreamCaptureMode mode) {
  return driver([&] {
    return stream_begin_capture_to_graph(rt(hStream), hGraph, dependencies,
                                         reinterpret_cast<const cudaGraphEdgeData*>(dependencyData),
                                         numDependencies, rt(mode));
  });
}

extern "C" CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return driver([&] { return stream_end_capture(rt(hStream), phGraph); });
}

extern "C" CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return driver([&] {
    return cudaStreamIsCapturing(rt(hStream), reinterpret_cast<cudaStreamCaptureStatus*>(captureStatus));
  });
}

extern "C" CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                   cuuint64_t* id_out) {
  return driver([&] {
    return stream_get_capture_info(rt(hStream), reinterpret_cast<cudaStreamCaptureStatus*>(captureStatus_out),
                                   reinterpret_cast<unsigned long long*>(id_out), nullptr, nullptr, nullptr,
                                   nullptr);
  });
}

extern "C" CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                      cuuint64_t* id_out, CUgraph* graph_out,
                                                      const CUgraphNode** dependencies_out,
                                                      size_t* numDependencies_out) {
  return driver([&] {
    return stream_get_capture_info(rt(hStream), reinterpret_cast<cudaStreamCaptureStatus*>(captureStatus_out),
                                   reinterpret_cast<unsigned long long*>(id_out), graph_out, dependencies_out,
                                   nullptr, numDependencies_out);
  });
}

extern "C" CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                      cuuint64_t* id_out, CUgraph* graph_out,
                                                      const CUgraphNode** dependencies_out,
                                                      const CUgraphEdgeData** edgeData_out,
                                                      size_t* numDependencies_out) {
  return driver([&] {
    return stream_get_capture_info(rt(hStream), reinterpret_cast<cudaStreamCaptureStatus*>(captureStatus_out),
                                   reinterpret_cast<unsigned long long*>(id_out), graph_out, dependencies_out,
                                   reinterpret_cast<const cudaGraphEdgeData**>(edgeData_out),
                                   numDependencies_out);
  });
}

extern "C" CUresult CUDAAPI cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies,
                                                              size_t numDependencies, unsigned int flags) {
  return driver([&] {
    return stream_update_capture_dependencies(rt(hStream), dependencies, nullptr, numDependencies, flags);
  });
}

extern "C" CUresult CUDAAPI cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode* dependencies,
                                                                 const CUgraphEdgeData* dependencyData,
                                                                 size_t numDependencies, unsigned int flags) {
  return driver([&] {
    return stream_update_capture_dependencies(rt(hStream), dependencies,
                                              reinterpret_cast<const cudaGraphEdgeData*>(dependencyData),
                                              numDependencies, flags);
  });
}

extern "C" CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  return driver([&] { return thread_exchange_stream_capture_mode(reinterpret_cast<cudaStreamCaptureMode*>(mode)); });
}
