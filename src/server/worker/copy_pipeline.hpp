// Bulk copies in blocks through the staging pool, overlapping the network
// with the GPU's copies. `issue` queues the GPU copy of one block: it gets
// the staging buffer, the block's byte offset in the whole transfer and its
// length. `device`, for a contiguous copy, is its device memory: where the
// connection reaches it (zero_copy.hpp) the bytes move in place instead,
// once the stream's earlier work is done, as the GPU's copy would wait.
#pragma once
#include <functional>

#include "server/worker/request.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {

using IssueBlock = std::function<int32_t(void* staging, size_t offset, size_t len)>;

// A block holds whole rows, so a staging buffer grows to the widest row: a
// 2-D or 3-D copy whose rows are wider than this is refused, so that no
// width from the wire sizes the worker's page-locked memory past it.
constexpr size_t kMaxStagedRow = 64u << 20;

// The staging buffers of the request's lane for its device.
StagingPool& lane_staging(SessionContext& s, Request& req);

// Host to device: the payload of `req` (total bytes) flows in. Blocks are
// multiples of `granule` bytes (a row, for 2-D copies). When `sync`, returns
// once the GPU finished.
int32_t pipeline_in(SessionContext& s, Request& req, size_t total, size_t granule, Handle stream, bool sync,
                    const IssueBlock& issue, void* device = nullptr);

// Device to host: streams `total` bytes as the reply's payload, then the
// final status. The reply header must already be sent.
void pipeline_out(SessionContext& s, Request& req, size_t total, size_t granule, Handle stream,
                  const IssueBlock& issue, const void* device = nullptr);

}  // namespace rgpu::server
