// Shareable handles: memory (cuMemExportToShareableHandle), pools
// (cudaMemPoolExportToShareableHandle) and their pointers, and dma-buf
// descriptors of device ranges. A POSIX descriptor is real in both
// processes: the worker exports with the driver and sends its descriptor
// along with the reply; the application passes it to another process,
// whose client sends it with its import request to its own worker. That
// needs a connection that carries descriptors (shm); fabric handles and
// pointer export data travel as bytes on any transport.
#include <unistd.h>

#include "protocol/op_names.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// A handle taken from a request; its descriptor closes with it.
struct RequestHandle : ShareableHandle {
  RequestHandle() = default;
  RequestHandle(const RequestHandle&) = delete;
  RequestHandle& operator=(const RequestHandle&) = delete;
  ~RequestHandle() {
    if (fd >= 0) close(fd);
  }
};

// Whether this connection can carry what a handle of `type` needs.
int32_t check_type(SessionContext& s, Request& req, int32_t type) {
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) return cudaSuccess;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return cudaErrorInvalidValue;
  if (req.connection().passes_descriptors()) return cudaSuccess;
  s.warnings.warn("handle needs shm", "%s: POSIX file descriptor handles need the shm transport",
                  proto::op_name(req.header().op));
  return cudaErrorNotSupported;
}

// The handle an import names: its type, then a fabric handle's bytes or,
// for a POSIX descriptor, the one that came with the frame.
int32_t read_handle(SessionContext& s, Request& req, RequestHandle* h) {
  auto type = req.args.get<int32_t>();
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) h->fabric = req.args.get<CUmemFabricHandle>();
  req.args.expect_end();
  if (int32_t e = check_type(s, req, type)) return e;
  h->type = static_cast<CUmemAllocationHandleType>(type);
  if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && (h->fd = req.connection().take_fd()) < 0)
    return cudaErrorInvalidValue;  // the client sent none
  return cudaSuccess;
}

// An export's handle: a descriptor goes with the reply, a fabric handle in it.
int32_t reply_handle(Request& req, const ShareableHandle& h, proto::Writer& out) {
  if (h.type == CU_MEM_HANDLE_TYPE_FABRIC)
    out.put(h.fabric);
  else
    req.lane().reply_fd = h.fd;
  return cudaSuccess;
}

int32_t vmm_export(SessionContext& s, Request& req, proto::Writer& out) {
  auto allocation = req.args.get<uint64_t>();
  auto type = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.vmm.allocation_size(allocation)) return cudaErrorInvalidValue;
  if (int32_t e = check_type(s, req, type)) return e;
  ShareableHandle h{static_cast<CUmemAllocationHandleType>(type)};
  if (int32_t e = s.backend().vmm_export(allocation, &h)) return e;
  return reply_handle(req, h, out);
}

int32_t vmm_import(SessionContext& s, Request& req, proto::Writer& out) {
  RequestHandle h;
  if (int32_t e = read_handle(s, req, &h)) return e;
  Handle allocation = 0;
  size_t size = 0;
  CUmemAllocationProp prop{};
  if (int32_t e = s.backend().vmm_import(h, &allocation, &size, &prop)) return e;
  s.vmm.add_allocation(allocation, size);
  out.put<uint64_t>(allocation).put(prop);
  return cudaSuccess;
}

int32_t pool_export(SessionContext& s, Request& req, proto::Writer& out) {
  auto pool = req.args.get<uint64_t>();
  auto type = req.args.get<int32_t>();
  auto flags = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.pools.contains(pool)) return cudaErrorInvalidResourceHandle;
  if (flags) return cudaErrorInvalidValue;
  if (int32_t e = check_type(s, req, type)) return e;
  ShareableHandle h{static_cast<CUmemAllocationHandleType>(type)};
  if (int32_t e = s.backend().mem_pool_export(pool, &h)) return e;
  return reply_handle(req, h, out);
}

int32_t pool_import(SessionContext& s, Request& req, proto::Writer& out) {
  RequestHandle h;
  if (int32_t e = read_handle(s, req, &h)) return e;
  if (!s.pools.room_for_one_more()) return cudaErrorMemoryAllocation;
  Handle pool = 0;
  if (int32_t e = s.backend().mem_pool_import(h, &pool)) return e;
  s.pools.add(pool);
  out.put<uint64_t>(pool);
  return cudaSuccess;
}

int32_t pool_export_pointer(SessionContext& s, Request& req, proto::Writer& out) {
  auto ptr = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.allocations.contains(ptr, 1)) return cudaErrorInvalidValue;
  CUmemPoolPtrExportData data{};
  if (int32_t e = s.backend().mem_pool_export_pointer(ptr, &data)) return e;
  out.put(data);
  return cudaSuccess;
}

// The imported pointer joins the session's memory: copies and launches on it
// validate, and cudaFree / cuMemFree give it back.
int32_t pool_import_pointer(SessionContext& s, Request& req, proto::Writer& out) {
  auto pool = req.args.get<uint64_t>();
  auto data = req.args.get<CUmemPoolPtrExportData>();
  req.args.expect_end();
  if (!s.pools.contains(pool)) return cudaErrorInvalidResourceHandle;
  DevPtr ptr = 0;
  size_t size = 0;
  if (int32_t e = s.backend().mem_pool_import_pointer(pool, data, &ptr, &size)) return e;
  s.allocations.add(ptr, size);
  out.put<uint64_t>(ptr).put<uint64_t>(size);
  return cudaSuccess;
}

int32_t range_handle(SessionContext& s, Request& req, proto::Writer&) {
  auto ptr = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  auto type = req.args.get<int32_t>();
  auto flags = req.args.get<uint64_t>();
  req.args.expect_end();
  if (type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || size == 0 || !s.owns(ptr, size)) return cudaErrorInvalidValue;
  if (!req.connection().passes_descriptors()) {
    s.warnings.warn("handle needs shm",
                    "cuMemGetHandleForAddressRange: dma-buf file descriptors need the shm transport");
    return cudaErrorNotSupported;
  }
  int fd = -1;
  if (int32_t e = s.backend().mem_range_handle(ptr, size, static_cast<CUmemRangeHandleType>(type), flags, &fd))
    return e;
  req.lane().reply_fd = fd;
  return cudaSuccess;
}

}  // namespace

void register_shareable_handle_handlers(Dispatcher& d) {
  d.add(proto::kOpVmmExport, vmm_export);
  d.add(proto::kOpVmmImport, vmm_import);
  d.add(proto::kOpMemPoolExport, pool_export);
  d.add(proto::kOpMemPoolImport, pool_import);
  d.add(proto::kOpMemPoolExportPointer, pool_export_pointer);
  d.add(proto::kOpMemPoolImportPointer, pool_import_pointer);
  d.add(proto::kOpMemGetHandleForAddressRange, range_handle);
}

}  // namespace rgpu::server
