// CUDA IPC between application processes served by workers of this server
// (see ipc_records.hpp). Imported memory joins the session's mapped memory,
// so copies and memsets on it validate, until the handle is closed.
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/ipc_records.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

int32_t reply_token(SessionContext& s, const IpcRecord& record, proto::Writer& out) {
  IpcToken token;
  std::string path;
  if (!write_ipc_record(record, &token, &path)) return cudaErrorMemoryAllocation;
  s.ipc_exports.add(std::move(path));
  out.put<uint64_t>(ipc_server_identity()).put(token);
  return cudaSuccess;
}

// The record a handle names, if it is of this server and of that kind, and
// the server's IPC sharing lets this session open it. A handle of another
// client is answered as one that does not exist.
std::optional<IpcRecord> find_record(SessionContext& s, Request& req, IpcKind kind) {
  auto server = req.args.get<uint64_t>();
  auto token = req.args.get<IpcToken>();
  if (server != ipc_server_identity()) {
    s.warnings.warn("foreign IPC handle", "IPC handle of another rgpu server refused");
    return std::nullopt;
  }
  auto record = read_ipc_record(token);
  if (!record || record->kind != kind) return std::nullopt;
  if (!may_import(s.ipc_sharing, record->owner, s.ipc_owner)) {
    s.warnings.warn("IPC handle of another client",
                    "IPC handle refused: exported by another client or job (--ipc-sharing)");
    return std::nullopt;
  }
  return record;
}

int32_t get_mem_handle(SessionContext& s, Request& req, proto::Writer& out) {
  auto base = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.allocations.contains(base, size)) return cudaErrorInvalidValue;
  IpcRecord record{IpcKind::memory, size, s.ipc_owner, {}};
  if (int32_t e = s.backend().ipc_export_memory(base, size, &record.blob)) return e;
  return reply_token(s, record, out);
}

int32_t open_mem_handle(SessionContext& s, Request& req, proto::Writer& out) {
  auto record = find_record(s, req, IpcKind::memory);
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!record) return cudaErrorInvalidResourceHandle;
  if (flags & ~cudaIpcMemLazyEnablePeerAccess) return cudaErrorInvalidValue;
  DevPtr p = 0;
  if (int32_t e = s.backend().ipc_import_memory(record->blob, record->size, &p)) return e;
  s.mapped.add(p, record->size);
  s.ipc_imports.add(p);
  out.put<uint64_t>(p).put<uint64_t>(record->size);
  return cudaSuccess;
}

int32_t close_mem_handle(SessionContext& s, Request& req, proto::Writer&) {
  auto p = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.ipc_imports.remove(p)) return cudaErrorInvalidValue;
  s.mapped.remove(p);
  return s.backend().ipc_close_memory(p);
}

int32_t get_event_handle(SessionContext& s, Request& req, proto::Writer& out) {
  auto event = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.valid_event(event)) return cudaErrorInvalidResourceHandle;
  IpcRecord record{IpcKind::event, 0, s.ipc_owner, {}};
  if (int32_t e = s.backend().ipc_export_event(event, &record.blob)) return e;
  return reply_token(s, record, out);
}

int32_t open_event_handle(SessionContext& s, Request& req, proto::Writer& out) {
  auto record = find_record(s, req, IpcKind::event);
  req.args.expect_end();
  if (!record) return cudaErrorInvalidResourceHandle;
  if (!s.events.room_for_one_more()) return cudaErrorMemoryAllocation;
  Handle event = 0;
  if (int32_t e = s.backend().ipc_import_event(record->blob, &event)) return e;
  s.events.add(event);
  out.put<uint64_t>(event);
  return cudaSuccess;
}

}  // namespace

void register_ipc_handlers(Dispatcher& d) {
  d.add(proto::kOpIpcGetMemHandle, get_mem_handle);
  d.add(proto::kOpIpcOpenMemHandle, open_mem_handle);
  d.add(proto::kOpIpcCloseMemHandle, close_mem_handle);
  d.add(proto::kOpIpcGetEventHandle, get_event_handle);
  d.add(proto::kOpIpcOpenEventHandle, open_event_handle);
}

}  // namespace rgpu::server
