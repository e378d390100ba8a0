// The one implementation behind every array and 3-D copy of both APIs
// (cudaMemcpy3D, cudaMemcpy*Array*, cuMemcpy3D, cuMemcpyHtoA, ...): host
// data goes out as packed rows and comes back the same way; device-side
// regions are named for the server to check and copy.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rgpu::client {

// One side of a copy. Positions and pitches are in bytes, arrays included.
struct CopyEnd {
  enum Kind { host, device, array } kind;
  void* ptr = nullptr;  // host or device memory: the origin the position counts from
  size_t pitch = 0, rows = 0;  // bytes per row, rows per slice
  cudaArray_const_t arr = nullptr;
  size_t x = 0, y = 0, z = 0;
};

cudaError_t copy_3d(const CopyEnd& dst, const CopyEnd& src, size_t width, size_t height, size_t depth,
                    cudaStream_t stream, bool async);

// A pointer side: host or device as `kind` says for a source (`is_src`) or
// destination; cudaMemcpyDefault asks the memory map.
cudaError_t pointer_end(void* ptr, size_t pitch, size_t rows, cudaMemcpyKind kind, bool is_src, CopyEnd* out);
// An array side at element position (x, y, z); `element` receives its element size.
cudaError_t array_end(cudaArray_const_t array, size_t x, size_t y, size_t z, CopyEnd* out, size_t* element);

// The legacy linear array copies (cudaMemcpyToArray, cuMemcpyHtoA, ...):
// `count` bytes on from each side's position, row after row of its array.
cudaError_t copy_across_rows(CopyEnd dst, CopyEnd src, size_t count, cudaStream_t stream, bool async);

// cudaMemcpy3DParms as cudaMemcpy3D takes it.
cudaError_t copy_3d_parms(const cudaMemcpy3DParms* p, cudaStream_t stream, bool async);
// cudaMemcpy3DBatchAsync; fail_idx, if given, receives the index of the copy
// that failed, or SIZE_MAX when the error concerns the batch as a whole.
cudaError_t copy_3d_batch(size_t count, cudaMemcpy3DBatchOp* ops, unsigned long long flags, cudaStream_t stream,
                          size_t* fail_idx);

}  // namespace rgpu::client
