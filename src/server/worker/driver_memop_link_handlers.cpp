// The driver API's stream memory operations (each address must be the
// session's own device memory, aligned to its width) and JIT links (the
// inputs travel as the payload; the linked image comes back).
#include <cuda.h>

#include "protocol/graph_node.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/payload_blocks.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

constexpr uint32_t kMaxMemOps = 4096;
constexpr uint32_t kMaxLinkInputs = 1024;

int32_t stream_mem_ops(SessionContext& s, Request& req, proto::Writer&) {
  auto stream = req.args.get<uint64_t>();
  auto flags = req.args.get<uint32_t>();
  auto count = req.args.get<uint32_t>();
  if (count == 0 || count > kMaxMemOps) return cudaErrorInvalidValue;
  std::vector<StreamMemOp> ops(count);
  for (auto& op : ops) {
    op.type = req.args.get<uint32_t>();
    op.flags = req.args.get<uint32_t>();
    op.address = req.args.get<uint64_t>();
    op.value = req.args.get<uint64_t>();
  }
  req.args.expect_end();
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  for (const auto& op : ops) {
    int width = proto::mem_op_width(op.type);
    if (width < 0) return cudaErrorInvalidValue;
    if (width == 0 ? op.address != 0 : (op.address % width || !s.owns(op.address, width)))
      return cudaErrorInvalidValue;
  }
  return s.backend().stream_mem_ops(stream, ops, flags);
}

int32_t link(SessionContext& s, Request& req, proto::Writer& out) {
  auto count = req.args.get<uint32_t>();
  if (count == 0 || count > kMaxLinkInputs) return cudaErrorInvalidValue;
  std::vector<LinkInput> inputs(count);
  std::vector<uint64_t> sizes(count);
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    inputs[i].type = req.args.get<int32_t>();
    inputs[i].name = req.args.get_string();
    sizes[i] = req.args.get<uint64_t>();
    if (sizes[i] == 0 || sizes[i] > UINT64_MAX - total) return cudaErrorInvalidValue;
    total += sizes[i];
  }
  req.args.expect_end();
  if (total != req.payload_left()) return cudaErrorInvalidValue;
  // The inputs are held whole until the link is done, as a module's image is.
  MemoryHold held(s.host_memory);
  if (!s.fits_module(total) || !held.take(total, "link inputs")) return cudaErrorMemoryAllocation;
  for (uint32_t i = 0; i < count; ++i) append_payload(req, sizes[i], &inputs[i].data);
  std::vector<uint8_t> image;
  if (int32_t e = s.backend().link(inputs, &image)) return e;
  out.put_bytes(image.data(), image.size());
  return cudaSuccess;
}

}  // namespace

void register_driver_memop_link_handlers(Dispatcher& d) {
  d.add(proto::kOpStreamMemOps, stream_mem_ops);
  d.add(proto::kOpLink, link);
}

}  // namespace rgpu::server
