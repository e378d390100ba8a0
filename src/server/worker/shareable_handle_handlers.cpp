// Shareable handles: memory (cuMemExportToShareableHandle), pools
// (cudaMemPoolExportToShareableHandle) and their pointers, and dma-buf
// descriptors of device ranges. A POSIX descriptor handle is real in both
// processes where the connection carries descriptors (shm): the worker
// exports with the driver and sends its descriptor along with the reply;
// the application passes it to another process, whose client sends it
// with its import request to its own worker. Elsewhere (tcp, ucx) the
// worker keeps the descriptor and replies with a token that the client
// wraps in a stand-in descriptor; an import presents the token, and the
// importing worker fetches the descriptor from the exporting one
// (descriptor_exports.hpp). Fabric handles and pointer export data travel
// as bytes on any transport.
#include <unistd.h>

#include "protocol/descriptor_token.hpp"
#include "protocol/op_names.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

using proto::DescriptorKind;

// A handle taken from a request; its descriptor closes with it.
struct RequestHandle : ShareableHandle {
  RequestHandle() = default;
  RequestHandle(const RequestHandle&) = delete;
  RequestHandle& operator=(const RequestHandle&) = delete;
  ~RequestHandle() {
    if (fd >= 0) close(fd);
  }
};

int32_t check_type(int32_t type) {
  return type == CU_MEM_HANDLE_TYPE_FABRIC || type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
             ? cudaSuccess
             : cudaErrorInvalidValue;
}

// The real descriptor a stand-in's token names, from its exporting worker.
int32_t fetch_descriptor(SessionContext& s, Request& req, const proto::DescriptorToken& token, DescriptorKind kind,
                         int* fd) {
  const char* op = proto::op_name(req.header().op);
  if (token.server != ipc_server_identity()) {
    s.warnings.warn("foreign descriptor handle", "%s: descriptor handle of another rgpu server refused", op);
    return cudaErrorInvalidValue;
  }
  if (token.kind != kind) {
    s.warnings.warn("descriptor handle kind", "%s: descriptor handle of a %s refused", op,
                    token.kind == DescriptorKind::pool ? "memory pool" : "memory allocation");
    return cudaErrorInvalidValue;
  }
  std::string why;
  *fd = fetch_exported_descriptor(token, s.ipc_owner, &why);
  if (*fd >= 0) return cudaSuccess;
  s.warnings.warn("descriptor handle refused", "%s: descriptor handle refused: %s", op, why.c_str());
  return cudaErrorInvalidValue;
}

// The handle an import names: its type, then a fabric handle's bytes or,
// for a POSIX descriptor, the one that came with the frame or a stand-in's
// token.
int32_t read_handle(SessionContext& s, Request& req, DescriptorKind kind, RequestHandle* h) {
  auto type = req.args.get<int32_t>();
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) h->fabric = req.args.get<CUmemFabricHandle>();
  auto carrier = proto::DescriptorCarrier::attached;
  proto::DescriptorToken token;
  if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
    carrier = req.args.get<proto::DescriptorCarrier>();
    if (carrier == proto::DescriptorCarrier::token) token = req.args.get<proto::DescriptorToken>();
  }
  req.args.expect_end();
  if (int32_t e = check_type(type)) return e;
  h->type = static_cast<CUmemAllocationHandleType>(type);
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return cudaSuccess;
  if (carrier == proto::DescriptorCarrier::token) return fetch_descriptor(s, req, token, kind, &h->fd);
  if (carrier != proto::DescriptorCarrier::attached || !req.connection().passes_descriptors()) return cudaErrorInvalidValue;
  return (h->fd = req.connection().take_fd()) < 0 ? cudaErrorInvalidValue : cudaSuccess;  // none sent
}

// An export of `source` as a handle of `type`, which `make` asks the
// backend for: a fabric handle goes in the reply; a descriptor with it
// where the connection carries descriptors, else it stays here and a token
// goes in the reply.
template <class Make>
int32_t export_handle(SessionContext& s, Request& req, DescriptorKind kind, uint64_t source, int32_t type, Make make,
                      proto::Writer& out) {
  if (int32_t e = check_type(type)) return e;
  ShareableHandle h{static_cast<CUmemAllocationHandleType>(type)};
  const bool keep = type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && !req.connection().passes_descriptors();
  proto::DescriptorToken token{ipc_server_identity(), static_cast<uint32_t>(getpid()), kind};
  if (keep && s.descriptor_exports.find(kind, source, &token)) {
    out.put(token);
    return cudaSuccess;
  }
  if (int32_t e = make(&h)) return e;
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    out.put(h.fabric);
  } else if (!keep) {
    req.lane().reply_fd = h.fd;
  } else {
    std::string why = s.descriptor_exports.add(kind, source, h.fd, s.ipc_owner, s.ipc_sharing, &token);
    if (!why.empty()) {
      s.warnings.warn("descriptor export", "%s: cannot keep a descriptor handle: %s",
                      proto::op_name(req.header().op), why.c_str());
      return cudaErrorNotSupported;
    }
    out.put(token);
  }
  return cudaSuccess;
}

int32_t vmm_export(SessionContext& s, Request& req, proto::Writer& out) {
  auto allocation = req.args.get<uint64_t>();
  auto type = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.vmm.allocation_size(allocation)) return cudaErrorInvalidValue;
  return export_handle(s, req, DescriptorKind::memory, allocation, type,
                       [&](ShareableHandle* h) { return s.backend().vmm_export(allocation, h); }, out);
}

int32_t vmm_import(SessionContext& s, Request& req, proto::Writer& out) {
  RequestHandle h;
  if (int32_t e = read_handle(s, req, DescriptorKind::memory, &h)) return e;
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
  return export_handle(s, req, DescriptorKind::pool, pool, type,
                       [&](ShareableHandle* h) { return s.backend().mem_pool_export(pool, h); }, out);
}

int32_t pool_import(SessionContext& s, Request& req, proto::Writer& out) {
  RequestHandle h;
  if (int32_t e = read_handle(s, req, DescriptorKind::pool, &h)) return e;
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
