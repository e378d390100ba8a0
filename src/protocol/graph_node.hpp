// A graph node's parameters as they cross the wire and reach the backend,
// whichever API built them. Only what can run on the server is expressible:
// copies are between device ranges and page-locked host memory the worker
// maps (shm; other application host memory is not on the server), kernels
// name the server's function with their arguments packed at the offsets its
// driver reported.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/external_wire.hpp"
#include "protocol/wire_enum.hpp"

namespace rgpu::proto {

constexpr uint8_t kHostDst = 1, kHostSrc = 2;
// On the wire only: that side of a copy node is a staging block of the
// worker's page-locked memory (kOpGraphStagingAlloc), by the worker's address;
// a host node that stages a copy names its block in dst and width, and
// whether it fills it (kStagingDst, an upload) or sends it (kStagingSrc).
constexpr uint8_t kStagingDst = 16, kStagingSrc = 32;
// The client's own marks, never sent: that host side is pageable application
// memory, which a graph reaches through staging (client/graph/staged_copy.hpp).
constexpr uint8_t kPageableDst = 4, kPageableSrc = 8;

struct ArrayPos {
  uint64_t x = 0, y = 0, z = 0;
  bool operator==(const ArrayPos&) const = default;
};

struct GraphNodeParams {
  int32_t type = cudaGraphNodeTypeEmpty;  // cudaGraphNodeType
  // Kernel.
  uint64_t function = 0;
  dim3 grid{}, block{};
  uint32_t shared_mem = 0;
  std::vector<uint8_t> args;
  // Memcpy (device to device, pitched rows; linear: height 1) and memset (dst).
  // Memory allocation: `width` bytes on server device `value`, the address
  // (the backend's answer) in `dst`; memory free: `dst`.
  uint64_t dst = 0, src = 0;
  uint64_t dst_pitch = 0, src_pitch = 0, width = 0, height = 0;
  // A 3-D copy: `depth` slices of `height` rows; slice k of a side starts
  // k * slice rows * pitch past it (dst_slice, src_slice: rows per slice,
  // at least `height`; unused at depth 1).
  uint64_t depth = 1, dst_slice = 0, src_slice = 0;
  // Memcpy with a CUDA array side: that side's array (the server's handle;
  // 0: memory at dst or src) and the copy's first element in it (x in bytes,
  // row y, slice z); that side's address, pitch and slice are unused.
  uint64_t dst_array = 0, src_array = 0;
  ArrayPos dst_at{}, src_at{};
  uint32_t value = 0, element_size = 0;  // memset
  // Memcpy: the sides that are shared page-locked host memory (kHostDst,
  // kHostSrc), by the application's address on the wire and the worker's
  // mapping of it in the backend, or staging blocks (kStagingDst, kStagingSrc).
  uint8_t host_sides = 0;
  // Child graph, event record/wait: the server's handle (a child graph's
  // ownership in `value`: cudaGraphChildGraphOwnershipMove hands the graph
  // itself to the node); host: the callback; conditional: the condition's
  // handle (its type in `value`, the number of bodies in `width`).
  uint64_t handle = 0;
  // External semaphore signal or wait: the server's semaphores and values.
  std::vector<ExternalSemaphoreOp> semaphores;
  // A conditional node's body graphs, which the backend makes with the node.
  std::vector<uint64_t> bodies;
  // Batch memory operations (kGraphNodeTypeBatchMemOp): `args` holds them as
  // MemOpWire records, `value` the batch's flags.
};

// The direction of a copy node, by which of its sides are host memory.
inline cudaMemcpyKind copy_kind(const GraphNodeParams& p) {
  bool dst_host = p.host_sides & kHostDst, src_host = p.host_sides & kHostSrc;
  return dst_host && src_host ? cudaMemcpyHostToHost
         : src_host           ? cudaMemcpyHostToDevice
         : dst_host           ? cudaMemcpyDeviceToHost
                              : cudaMemcpyDeviceToDevice;
}

// Rows of a copy node (every slice's), and where row i of a side lies.
inline uint64_t copy_rows(const GraphNodeParams& p) { return p.height * p.depth; }
inline uint64_t copy_row_offset(uint64_t i, uint64_t pitch, uint64_t slice, const GraphNodeParams& p) {
  return ((i / p.height) * slice + i % p.height) * pitch;
}

// Whether a copy node names a CUDA array on either side.
inline bool copies_array(const GraphNodeParams& p) { return p.dst_array || p.src_array; }

// The bytes one side of a copy node spans from its first byte; false when
// its rows overlap (width past the pitch, slices shorter than the copied
// height) or the numbers overflow.
inline bool copy_span(uint64_t pitch, uint64_t slice, const GraphNodeParams& p, uint64_t* span) {
  *span = 0;
  if (p.height == 0 || p.depth == 0 || p.width == 0) return true;
  if ((p.height > 1 || p.depth > 1) && p.width > pitch) return false;
  uint64_t rows = p.height;
  if (p.depth > 1) {
    if (slice < p.height || __builtin_mul_overflow(slice, p.depth - 1, &rows) ||
        __builtin_add_overflow(rows, p.height, &rows))
      return false;
  }
  return !__builtin_mul_overflow(pitch, rows - 1, span) && !__builtin_add_overflow(*span, p.width, span);
}

// The driver's batch memory-operation node, which the runtime's
// cudaGraphNodeType does not name.
constexpr int32_t kGraphNodeTypeBatchMemOp = 12;  // CU_GRAPH_NODE_TYPE_BATCH_MEM_OP

// One stream memory operation as it travels (cuStreamBatchMemOp's wire form too).
struct MemOpWire {
  uint32_t type;   // CUstreamBatchMemOpType
  uint32_t flags;  // wait, write or barrier flags
  uint64_t address;  // 0 for barriers and flushes
  uint64_t value;    // 32-bit operations use the low half
};
static_assert(sizeof(MemOpWire) == 24);

// Bytes an operation touches at its address; 0 for those without one (barriers,
// flushes), -1 for an unknown type.
inline int mem_op_width(uint32_t type) {
  switch (type) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_32: return 4;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: return 8;
    case CU_STREAM_MEM_OP_BARRIER:
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: return 0;
    default: return -1;
  }
}

// The driver's structure and back (the wait and write members share their layout).
// The application's operation type may be any number (wire_enum.hpp).
inline MemOpWire from_cu_mem_op(const CUstreamBatchMemOpParams& p) {
  uint32_t type = enum_number(p.operation);
  int n = mem_op_width(type);
  if (n <= 0) return {type, p.memoryBarrier.flags, 0, 0};
  return {type, p.writeValue.flags, p.writeValue.address, n == 4 ? p.writeValue.value : p.writeValue.value64};
}

inline CUstreamBatchMemOpParams to_cu_mem_op(const MemOpWire& w) {
  CUstreamBatchMemOpParams p{};
  p.operation = static_cast<CUstreamBatchMemOpType>(w.type);
  if (mem_op_width(w.type) <= 0) {
    p.memoryBarrier.flags = w.flags;
    return p;
  }
  p.writeValue.address = w.address;
  p.writeValue.value64 = w.value;  // a 32-bit value is its low half
  p.writeValue.flags = w.flags;
  return p;
}

inline std::vector<MemOpWire> node_mem_ops(const GraphNodeParams& p) {
  std::vector<MemOpWire> ops(p.args.size() / sizeof(MemOpWire));
  if (!ops.empty()) std::memcpy(ops.data(), p.args.data(), ops.size() * sizeof(MemOpWire));
  return ops;
}

inline void put_node(Writer& w, const GraphNodeParams& p) {
  w.put(p.type).put(p.function).put(p.grid).put(p.block).put(p.shared_mem);
  w.put_bytes(p.args.data(), p.args.size());
  w.put(p.dst).put(p.src).put(p.dst_pitch).put(p.src_pitch).put(p.width).put(p.height);
  w.put(p.depth).put(p.dst_slice).put(p.src_slice);
  w.put(p.dst_array).put(p.src_array).put(p.dst_at).put(p.src_at);
  w.put(p.value).put(p.element_size).put(p.host_sides).put(p.handle);
  put_semaphore_ops(w, p.semaphores);
  w.put<uint32_t>(static_cast<uint32_t>(p.bodies.size()));
  for (uint64_t b : p.bodies) w.put(b);
}

inline GraphNodeParams get_node(Reader& r) {
  GraphNodeParams p;
  p.type = r.get<int32_t>();
  p.function = r.get<uint64_t>();
  p.grid = r.get<dim3>();
  p.block = r.get<dim3>();
  p.shared_mem = r.get<uint32_t>();
  auto args = r.get_bytes();
  p.args.assign(args.begin(), args.end());
  p.dst = r.get<uint64_t>();
  p.src = r.get<uint64_t>();
  p.dst_pitch = r.get<uint64_t>();
  p.src_pitch = r.get<uint64_t>();
  p.width = r.get<uint64_t>();
  p.height = r.get<uint64_t>();
  p.depth = r.get<uint64_t>();
  p.dst_slice = r.get<uint64_t>();
  p.src_slice = r.get<uint64_t>();
  p.dst_array = r.get<uint64_t>();
  p.src_array = r.get<uint64_t>();
  p.dst_at = r.get<ArrayPos>();
  p.src_at = r.get<ArrayPos>();
  p.value = r.get<uint32_t>();
  p.element_size = r.get<uint32_t>();
  p.host_sides = r.get<uint8_t>();
  p.handle = r.get<uint64_t>();
  p.semaphores = get_semaphore_ops(r);
  auto bodies = r.get<uint32_t>();
  if (bodies > r.remaining() / sizeof(uint64_t)) throw DecodeError("more body graphs than the message holds");
  p.bodies.resize(bodies);
  for (auto& b : p.bodies) b = r.get<uint64_t>();
  return p;
}

}  // namespace rgpu::proto
