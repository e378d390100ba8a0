// The one implementation behind every linear copy entry point (cudaMemcpy,
// the Async and symbol variants): resolves direction and device, then sends
// host data as the call's payload or receives device data into place.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "client/core/call.hpp"

namespace rgpu::client {

// Routes a call on memory of `device`; a stream, if named, must be that
// device's. remote_stream receives the stream's server handle.
cudaError_t route_to_memory(Call& call, int device, cudaStream_t stream, uint64_t* remote_stream);

// A copy between device memory and client memory the server has mapped
// (shm): the server's own DMA, nothing on the socket. `application`: the
// host side is the application's page-locked memory (not a staging slot of
// rgpu's), which outlives the call, so a capture may take the copy in.
cudaError_t copy_shared(int device, const void* dev_ptr, const void* host, size_t n, bool to_device, bool application,
                        cudaStream_t stream, bool async);

// A copy between memory of one server's devices, ordered on `stream` of
// route_device (whose server runs it).
cudaError_t copy_on_server(int route_device, void* dst, const void* src, size_t n, cudaStream_t stream, bool async);

// The device of `stream` while it captures: copies and memsets between
// device ranges queued there go to its server even where the client knows no
// such memory, as locally, where the driver checks no address until the graph
// runs (cuDNN captures its plans with placeholder addresses). Nothing when
// the stream does not capture.
std::optional<int> capturing_device(cudaStream_t stream);
// The device of a stream the application created; none for default streams.
std::optional<int> created_stream_device(cudaStream_t stream);

// Where the GPU has p when it lies in promoted page-locked memory whose
// device memory is on the stream's server; nothing otherwise.
std::optional<uint64_t> device_side_for(const void* p, cudaStream_t stream);
cudaError_t copy_linear(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                        cudaStream_t stream, bool async);

// Whether the application's kind names a direction; read as a number, since
// C lets any int through an enum parameter and a C++ enum cannot hold it.
bool known_memcpy_kind(const cudaMemcpyKind& kind);

cudaError_t copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async);

}  // namespace rgpu::client
